"""Knative mode: the ExternalName Service and Istio VirtualService ``<isvc>`` (ingress_reconciler.go), and status URLs.

KServe's Go tests feed the Knative route URL (``my-model-predictor.test.example.com``) through status; offline the
external host is ``generate_domain_name(<isvc>)``, so these tests use the domainTemplate
``{{ .Name }}.{{ .Namespace }}.{{ .IngressDomain }}``, which gives the same host KServe derives from that URL.
"""

from __future__ import annotations

import json
from typing import Any

from kserve_compile.inputs.config import KServeConfig, parse_config
from kserve_compile.plan.routes import RoutedComponent, RouteInput
from kserve_compile.plan.status import knative_status
from kserve_compile.render.ingress.virtualservice import knative_ingress

NAME, NS = "my-model", "test"
LOCAL_GW, INGRESS_GW = "knative-serving/knative-local-gateway", "knative-serving/knative-ingress-gateway"
KNATIVE_LOCAL_GATEWAY_SERVICE = "someIngressServiceName"
INTERNAL = "my-model.test.svc.cluster.local"
# ingress_reconciler_test.go:48-57: isvc annotations include last-applied-configuration, which is disallowed.
ISVC_ANNOTATIONS = {"test": "test", "kubectl.kubernetes.io/last-applied-configuration": "test"}
VS_ANNOTATIONS = {"test": "test"}
LABELS = {"test": "test"}


def config(**ingress: Any) -> KServeConfig:
    """ingress_reconciler_test.go's IngressConfig, with KServe's default disallowed lists (inferenceService key)."""
    base = {
        "ingressGateway": INGRESS_GW,
        "knativeLocalGatewayService": KNATIVE_LOCAL_GATEWAY_SERVICE,
        "localGateway": LOCAL_GW,
        "localGatewayService": "knative-local-gateway.istio-system.svc.cluster.local",
        "domainTemplate": "{{ .Name }}.{{ .Namespace }}.{{ .IngressDomain }}",
    }
    return parse_config({"ingress": json.dumps({**base, **ingress}), "inferenceService": "{}"})


def isvc(*components: str, labels: dict | None = None, annotations: dict | None = None) -> RouteInput:
    return RouteInput(
        name=NAME,
        namespace=NS,
        labels=LABELS if labels is None else labels,
        annotations=ISVC_ANNOTATIONS if annotations is None else annotations,
        components={c: RoutedComponent(c, f"{NAME}-{c}", None, ()) for c in ("predictor", *components)},
    )


def authority(host: str, gateways: list[str], uri: dict | None = None) -> dict:
    quoted = host.replace(".", r"\.")
    match: dict[str, Any] = {}
    if uri:
        match["uri"] = uri
    match["authority"] = {"regex": f"^{quoted}(?::\\d{{1,5}})?$"}
    match["gateways"] = gateways
    return match


def http_route(matches: list[dict], backend: str, rewrite: dict | None = None) -> dict:
    out: dict[str, Any] = {
        "match": matches,
        "route": [{"destination": {"host": KNATIVE_LOCAL_GATEWAY_SERVICE, "port": {"number": 80}}, "weight": 100}],
        "headers": {
            "request": {
                "set": {
                    "Host": f"{backend}.{NS}.svc.cluster.local",
                    "KServe-Isvc-Name": NAME,
                    "KServe-Isvc-Namespace": NS,
                }
            }
        },
    }
    if rewrite:
        out["rewrite"] = rewrite
    return out


def default_matches(external: str = "my-model.test.example.com", uri: dict | None = None) -> list[dict]:
    """ingress_reconciler_test.go:62-79 (predictorRouteMatch)."""
    return [authority(INTERNAL, [LOCAL_GW, "mesh"], uri), authority(external, [INGRESS_GW], uri)]


def virtual_service(hosts: list[str], gateways: list[str], http: list[dict], labels: dict | None = None) -> dict:
    return {
        "apiVersion": "networking.istio.io/v1beta1",
        "kind": "VirtualService",
        "metadata": {
            "name": NAME,
            "namespace": NS,
            "labels": LABELS if labels is None else labels,
            "annotations": VS_ANNOTATIONS,
        },
        "spec": {"hosts": hosts, "gateways": gateways, "http": http},
    }


EXTERNAL_NAME_SERVICE = {
    "apiVersion": "v1",
    "kind": "Service",
    "metadata": {"name": NAME, "namespace": NS},
    "spec": {
        "externalName": "knative-local-gateway.istio-system.svc.cluster.local",
        "sessionAffinity": "None",
        "type": "ExternalName",
    },
}
ALL_GATEWAYS = [LOCAL_GW, "mesh", INGRESS_GW]
EXPLAIN_URI = {"regex": r"^/v1/models/[\w-]+:explain$"}


def test_predictor() -> None:
    # ingress_reconciler_test.go:115-172 "found predictor status"; ExternalName Service: ingress_reconciler.go:304-391.
    got = knative_ingress(isvc(), config())
    assert got == [
        EXTERNAL_NAME_SERVICE,
        virtual_service(
            [INTERNAL, "my-model.test.example.com"], ALL_GATEWAYS, [http_route(default_matches(), "my-model-predictor")]
        ),
    ]


def test_transformer() -> None:
    # ingress_reconciler_test.go:267-340 "found transformer and predictor status": traffic goes to the transformer.
    got = knative_ingress(isvc("transformer"), config())
    assert got[1] == virtual_service(
        [INTERNAL, "my-model.test.example.com"], ALL_GATEWAYS, [http_route(default_matches(), "my-model-transformer")]
    )


def test_explainer() -> None:
    # ingress_reconciler_test.go:368-488 "found explainer and predictor status": the :explain route comes first.
    got = knative_ingress(isvc("explainer"), config())
    assert got[1] == virtual_service(
        [INTERNAL, "my-model.test.example.com"],
        ALL_GATEWAYS,
        [
            http_route(default_matches(uri=EXPLAIN_URI), "my-model-explainer"),
            http_route(default_matches(), "my-model-predictor"),
        ],
    )


def test_path_template() -> None:
    # ingress_reconciler_test.go:489-612 "found predictor status with path template" (ingressDomain my-domain.com;
    # the external host follows ingressDomain here, see the module docstring).
    cfg = config(ingressDomain="my-domain.com", pathTemplate="/serving/{{ .Namespace }}/{{ .Name }}")
    got = knative_ingress(isvc(), cfg)
    external = "my-model.test.my-domain.com"
    assert got[1] == virtual_service(
        [INTERNAL, external, "my-domain.com"],
        ALL_GATEWAYS,
        [
            http_route(default_matches(external), "my-model-predictor"),
            http_route(
                [
                    authority("my-domain.com", [INGRESS_GW], {"prefix": "/serving/test/my-model/"}),
                    authority("my-domain.com", [INGRESS_GW], {"exact": "/serving/test/my-model"}),
                ],
                "my-model-predictor",
                rewrite={"uri": "/"},
            ),
        ],
    )


def test_path_template_with_explainer() -> None:
    # ingress_reconciler_test.go:906-1125 "found predictor and explainer status with path template".
    got = knative_ingress(
        isvc("explainer"), config(ingressDomain="my-domain.com", pathTemplate="/serving/{{ .Namespace }}/{{ .Name }}")
    )
    external = "my-model.test.my-domain.com"
    explain_regex = r"/serving/test/my-model(/v1/models/[\w-]+:explain)$"
    assert got[1] == virtual_service(
        [INTERNAL, external, "my-domain.com"],
        ALL_GATEWAYS,
        [
            http_route(default_matches(external, EXPLAIN_URI), "my-model-explainer"),
            http_route(default_matches(external), "my-model-predictor"),
            http_route(
                [authority("my-domain.com", [INGRESS_GW], {"regex": explain_regex})],
                "my-model-explainer",
                rewrite={"uriRegexRewrite": {"match": explain_regex, "rewrite": "\\1"}},
            ),
            http_route(
                [
                    authority("my-domain.com", [INGRESS_GW], {"prefix": "/serving/test/my-model/"}),
                    authority("my-domain.com", [INGRESS_GW], {"exact": "/serving/test/my-model"}),
                ],
                "my-model-predictor",
                rewrite={"uri": "/"},
            ),
        ],
    )


def test_additional_domains_from_knative_domain_config() -> None:
    # Adapted from ingress_reconciler_test.go:613-905 (additional ingress domains, with duplicates; no pathTemplate
    # here). The suffixes come from Knative's config-domain keys (live state), passed here as knative_domains.
    # Hosts and matches are deduplicated.
    cfg = config(
        ingressDomain="example.com",
        additionalIngressDomains=[
            "example.com",
            "my-additional-domain.com",
            "my-second-additional-domain.com",
            "my-additional-domain.com",
        ],
    )
    got = knative_ingress(isvc(), cfg, knative_domains=["my-domain-1.com", "example.com"])
    extra = ["my-model.test.my-additional-domain.com", "my-model.test.my-second-additional-domain.com"]
    assert got[1] == virtual_service(
        [INTERNAL, "my-model.test.example.com", *extra],
        ALL_GATEWAYS,
        [
            http_route(default_matches() + [authority(h, [INGRESS_GW]) for h in extra], "my-model-predictor"),
        ],
    )
    # Offline (no config-domain keys) there are no additional hosts.
    assert knative_ingress(isvc(), cfg)[1]["spec"]["hosts"] == [INTERNAL, "my-model.test.example.com"]


def test_cluster_local_visibility_label() -> None:
    # ingress_reconciler_test.go:1203-1283 "isvc labelled with cluster local visibility": internal host and local
    # gateways only; the VirtualService keeps the isvc's labels unfiltered.
    local = {"networking.knative.dev/visibility": "cluster-local"}
    got = knative_ingress(isvc(labels=local), config())
    assert got[1] == virtual_service(
        [INTERNAL],
        [LOCAL_GW, "mesh"],
        [
            http_route([authority(INTERNAL, [LOCAL_GW, "mesh"])], "my-model-predictor"),
        ],
        labels=local,
    )


def test_route_host_equal_to_cluster_host_is_internal() -> None:
    # ingress_reconciler_test.go:173-239 "local cluster predictor": a route host of <isvc>.<ns>.svc.cluster.local.
    got = knative_ingress(isvc(), config(ingressDomain="svc.cluster.local"))
    assert got[1]["spec"]["hosts"] == [INTERNAL]
    assert got[1]["spec"]["gateways"] == [LOCAL_GW, "mesh"]
    assert got[1]["spec"]["http"] == [http_route([authority(INTERNAL, [LOCAL_GW, "mesh"])], "my-model-predictor")]


def test_disable_istio_virtual_host_and_stop() -> None:
    # ingress_reconciler.go:237-300: neither the VirtualService nor the ExternalName Service.
    assert knative_ingress(isvc(), config(disableIstioVirtualHost=True)) == []
    assert knative_ingress(isvc(annotations={"serving.kserve.io/stop": "true"}), config()) == []


def test_predictor_name_is_the_backend_host() -> None:
    route = RouteInput(NAME, NS, {}, {}, {"predictor": RoutedComponent("predictor", "my-model-blue-predictor", None)})
    vs = knative_ingress(route, config())[1]
    assert vs["metadata"] == {"name": NAME, "namespace": NS}
    host = vs["spec"]["http"][0]["headers"]["request"]["set"]["Host"]
    assert host == "my-model-blue-predictor.test.svc.cluster.local"


# --- status -------------------------------------------------------------------------------------------------------


def test_status_default() -> None:
    # ingress_reconciler.go:82-127 with the predictor's Knative URL: url from the isvc host, address = <isvc> Service.
    assert knative_status(isvc("transformer"), config()) == {
        "url": "http://my-model.test.example.com",
        "address": {"url": "http://my-model.test.svc.cluster.local"},
        "components": {
            "predictor": {
                "url": "http://my-model-predictor.test.example.com",
                "address": {"url": "http://my-model-predictor.test.svc.cluster.local"},
            },
            "transformer": {
                "url": "http://my-model-transformer.test.example.com",
                "address": {"url": "http://my-model-transformer.test.svc.cluster.local"},
            },
        },
    }


def test_status_path_template() -> None:
    # ingress_reconciler_test.go:1781-1873 (TestGetServiceUrlPathBased): http://my-domain.com/serving/test/my-model.
    cfg = config(ingressDomain="my-domain.com", pathTemplate="/serving/{{ .Namespace }}/{{ .Name }}")
    assert knative_status(isvc(), cfg)["url"] == "http://my-domain.com/serving/test/my-model"


def test_status_disable_istio_virtual_host() -> None:
    # controller_test.go:4361-4464 (foo-disable-istio): url and address are the predictor's own.
    route = RouteInput(
        "foo-disable-istio",
        "default",
        {},
        {},
        {"predictor": RoutedComponent("predictor", "foo-disable-istio-predictor", None)},
    )
    got = knative_status(route, config(disableIstioVirtualHost=True, urlScheme="https"))
    assert got["url"] == "https://foo-disable-istio-predictor.default.example.com"
    assert got["address"] == {"url": "http://foo-disable-istio-predictor.default.svc.cluster.local"}


def test_status_cluster_local() -> None:
    # A cluster-local ksvc's URL is its cluster host; KServe strips "-predictor" from it for status.url.
    got = knative_status(isvc(labels={"networking.knative.dev/visibility": "cluster-local"}), config())
    assert got == {
        "url": "http://my-model.test.svc.cluster.local",
        "address": {"url": "http://my-model.test.svc.cluster.local"},
        "components": {
            "predictor": {
                "url": "http://my-model-predictor.test.svc.cluster.local",
                "address": {"url": "http://my-model-predictor.test.svc.cluster.local"},
            }
        },
    }


def test_status_stopped_has_no_url() -> None:
    got = knative_status(isvc(annotations={"serving.kserve.io/stop": "true"}), config())
    assert "url" not in got and "address" not in got
