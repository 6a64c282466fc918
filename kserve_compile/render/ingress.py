"""Standard-mode routing (HTTPRoutes or a Kubernetes Ingress) and the URLs KServe reports in status.

Input is a :class:`RouteInput` built by the pipeline; output is plain dicts in KServe's field names, empty fields
left out the way Go's ``omitempty`` serialises them. The steady state is assumed: every component is Ready, so the
routes KServe only creates after readiness are rendered. Sources: ``reconcilers/ingress/httproute_reconciler.go``,
``kube_ingress_reconciler.go`` and ``reconcilers/raw/raw_kube_reconciler.go`` (component URLs).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .. import constants as C
from ..config import KServeConfig
from ..errors import InputError
from .domain import generate_domain_name, service_hostname


@dataclass(frozen=True)
class RoutedComponent:
    component: str  # "predictor" | "transformer" | "explainer"
    service_name: str  # the component's Service/ksvc name, e.g. "foo-predictor" or "foo-blue-predictor"
    timeout: int | None  # component spec `timeout` (seconds)
    service_ports: tuple[dict, ...] = ()  # the rendered Service's spec.ports (dual-protocol rules, headless address)
    # The component's own metadata, read only by domainTemplate when rendering its status URL; None = the isvc's.
    labels: Mapping[str, str] | None = None
    annotations: Mapping[str, str] | None = None


@dataclass(frozen=True)
class RouteInput:
    name: str  # isvc name
    namespace: str
    labels: Mapping[str, str]  # isvc labels (after defaulting)
    annotations: Mapping[str, str]  # isvc annotations (after defaulting, NOT filtered)
    components: Mapping[str, RoutedComponent]  # present components only
    canaries: tuple[tuple[str, int], ...] = field(default=())  # (canary Service name, trafficPercent)

    @property
    def predictor(self) -> RoutedComponent:
        try:
            return self.components[C.PREDICTOR]
        except KeyError:
            raise InputError(f"InferenceService {self.name!r} has no predictor to route to", "spec.predictor") from None

    @property
    def transformer(self) -> RoutedComponent | None:
        return self.components.get(C.TRANSFORMER)

    @property
    def explainer(self) -> RoutedComponent | None:
        return self.components.get(C.EXPLAINER)

    @property
    def entry(self) -> RoutedComponent:
        """The component that receives prediction traffic: the transformer if there is one, else the predictor."""
        return self.transformer or self.predictor

    @property
    def stopped(self) -> bool:
        """``serving.kserve.io/stop: "true"`` (any case): KServe removes the routes of a stopped isvc."""
        return self.annotations.get(C.ANN_STOP, "").lower() == "true"


def object_meta(name: str, namespace: str, labels: Mapping[str, str] | None = None,
                annotations: Mapping[str, str] | None = None) -> dict[str, Any]:
    """``metadata`` with empty label/annotation maps left out (omitempty)."""
    meta: dict[str, Any] = {"name": name, "namespace": namespace}
    if labels:
        meta["labels"] = dict(labels)
    if annotations:
        meta["annotations"] = dict(annotations)
    return meta


def is_grpc_port_name(name: str) -> bool:
    lowered = name.lower()
    return "grpc" in lowered or "h2c" in lowered


def is_grpc_port(port: Mapping[str, Any]) -> bool:
    return port.get("appProtocol") == C.APP_PROTOCOL_H2C or is_grpc_port_name(str(port.get("name") or ""))


def route_host(route: RouteInput, name: str, config: KServeConfig) -> str:
    """The external host of ``name`` under the isvc's metadata."""
    return generate_domain_name(name, route.namespace, config.ingress, route.labels, route.annotations)


def standard_is_internal(route: RouteInput, config: KServeConfig) -> bool:
    """Standard mode creates no ingress for a cluster-local isvc (KServe's visibility label or cluster-local domain)."""
    return (
        route.labels.get(C.LABEL_KSERVE_VISIBILITY) == C.VISIBILITY_CLUSTER_LOCAL
        or config.ingress.ingress_domain == C.CLUSTER_LOCAL_DOMAIN
    )


def standard_ingress(route: RouteInput, config: KServeConfig, *, ready_canaries: bool = False) -> list[dict]:
    """The HTTPRoutes (``enableGatewayApi``) or the Ingress KServe's Standard mode creates for ``route``.

    ``ready_canaries`` says whether the canaries in ``route.canaries`` are Ready (only a live daemon knows); KServe
    gives traffic only to Ready canaries, so offline they get no backend.
    """
    route.predictor  # noqa: B018 - a predictor is required; raises a located error otherwise
    if config.ingress.disable_ingress_creation or standard_is_internal(route, config) or route.stopped:
        return []
    if config.ingress.enable_gateway_api:
        from .ingress_httproute import http_routes

        return http_routes(route, config, ready_canaries=ready_canaries)
    from .ingress_kube import kube_ingress

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
