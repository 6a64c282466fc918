"""Knative-mode routing: the ExternalName Service and Istio VirtualService ``<isvc>`` (``ingress_reconciler.go``).

KServe derives the VirtualService's external host from the predictor's (or transformer's) Knative route URL in
live status, which an offline render cannot see. Here that route host is assumed to be
``generate_domain_name(<component service>)``, i.e. Knative's domain template is assumed to match KServe's
``domainTemplate`` (e.g. Knative ``{{.Name}}.{{.Namespace}}.{{.Domain}}`` with KServe
``{{ .Name }}.{{ .Namespace }}.{{ .IngressDomain }}``); the isvc host is then cut from it exactly as KServe does
(``ingress_reconciler.go`` getServiceHost: drop ``-<component>-default`` when the host contains ``-default``
anywhere, else the first ``-<component>``). The component URLs in :func:`knative_status` use the same route host.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ... import constants as C
from ...inputs.config import KServeConfig
from ...kube.fields import filtered
from ...plan.domain import additional_hosts, generate_path, host_regexp, service_hostname
from ...plan.routes import RouteInput, external_host, knative_is_internal, object_meta


def knative_ingress(route: RouteInput, config: KServeConfig, *, knative_domains: Sequence[str] = ()) -> list[dict]:
    """The ExternalName Service and VirtualService for ``route``; none with ``disableIstioVirtualHost`` or when stopped.

    ``knative_domains`` are the keys of Knative's ``config-domain`` ConfigMap (live state; none offline), the
    suffixes KServe swaps for ``additionalIngressDomains``.
    """
    route.predictor  # noqa: B018 - a predictor is required; raises a located error otherwise
    if config.ingress.disable_istio_virtual_host or route.stopped:
        return []
    return [_external_name_service(route, config), _virtual_service(route, config, knative_domains)]


def _external_name_service(route: RouteInput, config: KServeConfig) -> dict:
    return {
        "apiVersion": "v1",
        "kind": C.KIND_SERVICE,
        "metadata": object_meta(route.name, route.namespace),
        # An empty externalName is left out, as Go's omitempty does.
        "spec": {
            **({"externalName": config.ingress.local_gateway_service} if config.ingress.local_gateway_service else {}),
            "sessionAffinity": "None",
            "type": "ExternalName",
        },
    }


def _virtual_service(route: RouteInput, config: KServeConfig, knative_domains: Sequence[str]) -> dict:
    ingress = config.ingress
    internal = knative_is_internal(route, config)
    internal_host = service_hostname(route.name, route.namespace)
    target_host = "" if internal else external_host(route, config)
    extra_hosts = [] if internal else additional_hosts(knative_domains, target_host, ingress)
    backend = route.entry.service_name
    explainer = route.explainer

    http: list[dict] = []
    if explainer is not None:
        http.append(
            _route(
                route,
                config,
                _matches(C.EXPLAIN_PATH_REGEX, target_host, internal_host, extra_hosts, internal, config),
                explainer.service_name,
            )
        )
    http.append(_route(route, config, _matches("", target_host, internal_host, extra_hosts, internal, config), backend))

    hosts = [internal_host]
    gateways = [ingress.local_gateway, C.ISTIO_MESH_GATEWAY]
    if not internal:
        hosts.append(target_host)
        gateways.append(ingress.ingress_gateway)

    if ingress.path_template:
        path = generate_path(route.name, route.namespace, ingress).removesuffix("/")
        domain = ingress.ingress_domain
        authority = {"regex": host_regexp(domain)}
        if explainer is not None:
            regex = path + C.PATH_BASED_EXPLAIN_REGEX
            explain_route = _route(
                route,
                config,
                [{"uri": {"regex": regex}, "authority": authority, "gateways": [ingress.ingress_gateway]}],
                explainer.service_name,
            )
            explain_route["rewrite"] = {"uriRegexRewrite": {"match": regex, "rewrite": "\\1"}}
            http.append(explain_route)
        path_route = _route(
            route,
            config,
            [
                {"uri": {"prefix": path + "/"}, "authority": authority, "gateways": [ingress.ingress_gateway]},
                {"uri": {"exact": path}, "authority": authority, "gateways": [ingress.ingress_gateway]},
            ],
            backend,
        )
        path_route["rewrite"] = {"uri": "/"}
        http.append(path_route)
        hosts.append(domain)

    if not internal:
        for host in extra_hosts:
            if host not in hosts:
                hosts.append(host)

    return {
        "apiVersion": C.VIRTUAL_SERVICE_API_VERSION,
        "kind": C.KIND_VIRTUAL_SERVICE,
        # Labels are the isvc's, unfiltered; annotations drop the disallowed keys.
        "metadata": object_meta(
            route.name, route.namespace, route.labels, filtered(route.annotations, config.annotation_disallowed)
        ),
        "spec": {"hosts": hosts, "gateways": gateways, "http": http},
    }


def _matches(
    uri_regex: str, target_host: str, internal_host: str, extra_hosts: list[str], internal: bool, config: KServeConfig
) -> list[dict]:
    def match(host: str, gateways: list[str]) -> dict:
        m: dict[str, Any] = {}
        if uri_regex:
            m["uri"] = {"regex": uri_regex}
        m["authority"] = {"regex": host_regexp(host)}
        m["gateways"] = gateways
        return m

    ingress = config.ingress
    matches = [match(internal_host, [ingress.local_gateway, C.ISTIO_MESH_GATEWAY])]
    if not internal:
        matches.append(match(target_host, [ingress.ingress_gateway]))
        for host in extra_hosts:
            candidate = match(host, [ingress.ingress_gateway])
            if candidate not in matches:
                matches.append(candidate)
    return matches


def _route(route: RouteInput, config: KServeConfig, matches: list[dict], backend: str) -> dict:
    return {
        "match": matches,
        "route": [
            {
                "destination": {
                    "host": config.ingress.knative_local_gateway_service,
                    "port": {"number": C.SERVICE_PORT},
                },
                "weight": 100,
            }
        ],
        "headers": {
            "request": {
                "set": {
                    "Host": service_hostname(backend, route.namespace),
                    C.ISVC_NAME_HEADER: route.name,
                    C.ISVC_NAMESPACE_HEADER: route.namespace,
                }
            }
        },
    }
