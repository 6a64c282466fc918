"""What every ingress builder reads: the routed isvc (:class:`RouteInput`), object metadata and hosts.

Input is a :class:`RouteInput` built by the pipeline; output is plain dicts in KServe's field names, empty fields
left out the way Go's ``omitempty`` serialises them. The steady state is assumed: every component is Ready, so the
routes KServe only creates after readiness are rendered. Sources: ``reconcilers/ingress/httproute_reconciler.go``,
``kube_ingress_reconciler.go`` and ``reconcilers/raw/raw_kube_reconciler.go`` (component URLs).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from .. import constants as C
from ..errors import InputError
from ..inputs.config import KServeConfig
from .domain import generate_domain_name, service_hostname


class RoutedComponent(NamedTuple):
    component: str  # "predictor" | "transformer" | "explainer"
    service_name: str  # the component's Service/ksvc name, e.g. "foo-predictor" or "foo-blue-predictor"
    timeout: int | None  # component spec `timeout` (seconds)
    service_ports: tuple[dict, ...] = ()  # the rendered Service's spec.ports (dual-protocol rules, headless address)
    # The component's own metadata, read only by domainTemplate when rendering its status URL; None = the isvc's.
    labels: Mapping[str, str] | None = None
    annotations: Mapping[str, str] | None = None


class RouteInput(NamedTuple):
    name: str  # isvc name
    namespace: str
    labels: Mapping[str, str]  # isvc labels (after defaulting)
    annotations: Mapping[str, str]  # isvc annotations (after defaulting, NOT filtered)
    components: Mapping[str, RoutedComponent]  # present components only
    canaries: tuple[tuple[str, int], ...] = ()  # (canary Service name, trafficPercent)

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


def object_meta(
    name: str, namespace: str, labels: Mapping[str, str] | None = None, annotations: Mapping[str, str] | None = None
) -> dict[str, Any]:
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


def knative_is_internal(route: RouteInput, config: KServeConfig) -> bool:
    """Cluster-local: Knative's visibility label on the isvc, or a route host equal to the isvc's cluster host."""
    if route.labels.get(C.LABEL_KNATIVE_VISIBILITY) == C.VISIBILITY_CLUSTER_LOCAL:
        return True
    return external_host(route, config) == service_hostname(route.name, route.namespace)


def external_host(route: RouteInput, config: KServeConfig) -> str:
    """The isvc's external host, cut from the entry component's route host (see the module docstring)."""
    entry = route.entry
    host = component_host(route, config, entry)
    # Go's strings.Replace(host, old, "", 1) on the component's kind; the "-default" test is on the whole host, so
    # with a "{{.Name}}-{{.Namespace}}" template namespace "default" loses its suffix as well (KServe's behaviour).
    kind = "transformer" if route.transformer is not None else "predictor"
    cut = f"-{kind}-default" if "-default" in host else f"-{kind}"
    return host.replace(cut, "", 1)


def component_host(route: RouteInput, config: KServeConfig, comp: RoutedComponent) -> str:
    # Every component's ksvc carries the isvc's labels, so Knative makes all of them cluster-local together.
    if route.labels.get(C.LABEL_KNATIVE_VISIBILITY) == C.VISIBILITY_CLUSTER_LOCAL:
        return service_hostname(comp.service_name, route.namespace)
    labels = route.labels if comp.labels is None else comp.labels
    annotations = route.annotations if comp.annotations is None else comp.annotations
    return generate_domain_name(comp.service_name, route.namespace, config.ingress, labels, annotations)
