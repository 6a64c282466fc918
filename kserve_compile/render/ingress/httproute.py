"""Gateway API HTTPRoutes for Standard mode (``enableGatewayApi: true``), as ``httproute_reconciler.go`` builds them.

Routes, in KServe's reconcile order: ``<isvc>-predictor``, ``<isvc>-transformer``, ``<isvc>-explainer`` (when
present) and the top-level ``<isvc>``. Backends carry no ``group``/``weight`` (the API server defaults those) unless
the isvc has canaries, in which case the predictor and top-level routes get weighted backends.
"""

from __future__ import annotations

from typing import Any

from ... import constants as C
from ...errors import InputError
from ...inputs.config import KServeConfig
from ...kube.fields import filtered
from ...plan.domain import additional_hosts, generate_path
from ...plan.routes import RoutedComponent, RouteInput, is_grpc_port, object_meta, route_host


def http_routes(route: RouteInput, config: KServeConfig, *, ready_canaries: bool = False) -> list[dict]:
    predictor = route.predictor
    # The predictor route keeps the stable name and host (no predictor.name) so canary promotion does not move it.
    routes = [_component_route(route, config, predictor, C.component_name(route.name, C.PREDICTOR))]
    for comp in (route.transformer, route.explainer):
        if comp is not None:
            routes.append(_component_route(route, config, comp, comp.service_name))
    routes.append(_top_level_route(route, config))
    if route.canaries:
        for r in (routes[0], routes[-1]):
            _apply_canary_weights(r, route.canaries, ready=ready_canaries)
    return routes


def _component_route(route: RouteInput, config: KServeConfig, comp: RoutedComponent, route_name: str) -> dict:
    hostnames = [route_host(route, route_name, config)]
    rules = _service_rules(route, config, comp)
    return _http_route(route, config, route_name, hostnames, rules)


def _top_level_route(route: RouteInput, config: KServeConfig) -> dict:
    ingress = config.ingress
    top_host = route_host(route, route.name, config)
    hostnames = [top_host]
    for host in additional_hosts([ingress.ingress_domain], top_host, ingress):
        if host not in hostnames:
            hostnames.append(host)
    rules: list[dict] = []
    explainer, transformer, predictor = route.explainer, route.transformer, route.predictor
    if explainer is not None:
        rules.append(
            _rule(
                route,
                config,
                [_path_match(C.EXPLAIN_PATH_REGEX)],
                explainer.service_name,
                C.SERVICE_PORT,
                explainer.timeout,
            )
        )
    rules.extend(_service_rules(route, config, transformer or predictor))
    if ingress.path_template:
        path = generate_path(route.name, route.namespace, ingress).removesuffix("/")
        hostnames.append(ingress.ingress_domain)
        if explainer is not None:
            rules.append(
                _rule(
                    route,
                    config,
                    [_path_match(path + C.PATH_BASED_EXPLAIN_REGEX)],
                    explainer.service_name,
                    C.SERVICE_PORT,
                    explainer.timeout,
                )
            )
        entry = transformer or predictor
        rules.append(_rule(route, config, [_path_match(path + "/")], entry.service_name, C.SERVICE_PORT, entry.timeout))
    return _http_route(route, config, route.name, hostnames, rules)


def _service_rules(route: RouteInput, config: KServeConfig, comp: RoutedComponent) -> list[dict]:
    """One catch-all rule to port 80, or — when the Service has both an HTTP and a gRPC port — a gRPC rule first."""
    rest_port, grpc_port = _protocol_ports(comp.service_ports)
    if rest_port and grpc_port:
        grpc_match = {
            "path": {"type": "RegularExpression", "value": C.GRPC_INFERENCE_PATH_REGEX},
            "headers": [{"type": "RegularExpression", "name": "content-type", "value": C.GRPC_CONTENT_TYPE_REGEX}],
        }
        return [
            _rule(route, config, [grpc_match], comp.service_name, grpc_port, comp.timeout),
            _rule(route, config, [_path_match(C.FALLBACK_PATH_REGEX)], comp.service_name, rest_port, comp.timeout),
        ]
    return [_rule(route, config, [_path_match(C.FALLBACK_PATH_REGEX)], comp.service_name, C.SERVICE_PORT, comp.timeout)]


def _protocol_ports(ports: tuple[dict, ...]) -> tuple[int, int]:
    """The first HTTP and the first gRPC ``port`` of a Service (0 when absent)."""
    rest = grpc = 0
    for port in ports:
        number = int(port.get("port") or 0)
        if is_grpc_port(port):
            grpc = grpc or number
        else:
            rest = rest or number
    return rest, grpc


def _path_match(regex: str) -> dict:
    return {"path": {"type": "RegularExpression", "value": regex}}


def _rule(
    route: RouteInput, config: KServeConfig, matches: list[dict], service: str, port: int, timeout: int | None
) -> dict:
    rule: dict[str, Any] = {
        "matches": matches,
        "filters": [
            {
                "type": "RequestHeaderModifier",
                "requestHeaderModifier": {
                    "set": [
                        {"name": C.ISVC_NAME_HEADER, "value": route.name},
                        {"name": C.ISVC_NAMESPACE_HEADER, "value": route.namespace},
                    ]
                },
            }
        ],
        "backendRefs": [{"kind": C.KIND_SERVICE, "name": service, "namespace": route.namespace, "port": port}],
    }
    if not config.ingress.disable_httproute_timeout:
        seconds = C.DEFAULT_HTTPROUTE_TIMEOUT_SECONDS if timeout is None else timeout
        rule["timeouts"] = {"request": f"{seconds}s"}
    return rule


def _http_route(route: RouteInput, config: KServeConfig, name: str, hostnames: list[str], rules: list[dict]) -> dict:
    gateway = config.ingress.kserve_ingress_gateway
    namespace, sep, gateway_name = gateway.partition("/")
    if not sep or not namespace or not gateway_name:
        raise InputError(
            "invalid ingress config - kserveIngressGateway should be in the format <namespace>/<name>",
            "data.ingress.kserveIngressGateway",
        )
    meta = object_meta(
        name,
        route.namespace,
        filtered(route.labels, config.label_disallowed),
        filtered(route.annotations, config.annotation_disallowed),
    )
    return {
        "apiVersion": C.HTTPROUTE_API_VERSION,
        "kind": C.KIND_HTTPROUTE,
        "metadata": meta,
        "spec": {
            "parentRefs": [
                {"group": C.GATEWAY_API_GROUP, "kind": C.KIND_GATEWAY, "namespace": namespace, "name": gateway_name}
            ],
            "hostnames": hostnames,
            "rules": rules,
        },
    }


def _apply_canary_weights(http_route: dict, canaries: tuple[tuple[str, int], ...], *, ready: bool) -> None:
    """Stable backend weighted ``100 - Σ(ready canary %)``, then one backend per Ready canary (same kind/ns/port).

    KServe does this to every rule with a backend, whatever component that backend is.
    """
    live = canaries if ready else ()
    stable_weight = 100 - sum(percent for _, percent in live)
    for rule in http_route["spec"]["rules"]:
        refs = rule.get("backendRefs")
        if not refs:
            continue
        template = refs[0]
        weighted = [{**_backend_object(template), "weight": stable_weight}]
        for service, percent in live:
            weighted.append({**_backend_object(template), "name": service, "weight": percent})
        rule["backendRefs"] = weighted


def _backend_object(ref: dict) -> dict:
    return {k: ref[k] for k in ("group", "kind", "name", "namespace", "port") if k in ref}
