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
from ...plan.domain import additional_hosts, generate_domain_name, generate_path, host_regexp, service_hostname
from ...plan.routes import RoutedComponent, RouteInput, object_meta


def knative_is_internal(route: RouteInput, config: KServeConfig) -> bool:
    """Cluster-local: Knative's visibility label on the isvc, or a route host equal to the isvc's cluster host."""
    if route.labels.get(C.LABEL_KNATIVE_VISIBILITY) == C.VISIBILITY_CLUSTER_LOCAL:
        return True
    return external_host(route, config) == service_hostname(route.name, route.namespace)


def external_host(route: RouteInput, config: KServeConfig) -> str:
    """The isvc's external host, cut from the entry component's route host (see the module docstring)."""
    entry = route.entry
    host = _component_host(route, config, entry)
    # Go's strings.Replace(host, old, "", 1) on the component's kind; the "-default" test is on the whole host, so
    # with a "{{.Name}}-{{.Namespace}}" template namespace "default" loses its suffix as well (KServe's behaviour).
    kind = "transformer" if route.transformer is not None else "predictor"
    cut = f"-{kind}-default" if "-default" in host else f"-{kind}"
    return host.replace(cut, "", 1)


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
            url = f"{ingress.url_scheme}://{_component_host(route, config, route.entry)}"
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
            "url": "http://" + _component_host(route, config, comp),
            "address": {"url": "http://" + service_hostname(comp.service_name, route.namespace)},
        }
    status["components"] = components
    return status


def _component_host(route: RouteInput, config: KServeConfig, comp: RoutedComponent) -> str:
    # Every component's ksvc carries the isvc's labels, so Knative makes all of them cluster-local together.
    if route.labels.get(C.LABEL_KNATIVE_VISIBILITY) == C.VISIBILITY_CLUSTER_LOCAL:
        return service_hostname(comp.service_name, route.namespace)
    labels = route.labels if comp.labels is None else comp.labels
    annotations = route.annotations if comp.annotations is None else comp.annotations
    return generate_domain_name(comp.service_name, route.namespace, config.ingress, labels, annotations)
