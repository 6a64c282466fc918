"""Standard mode with Gateway API: the HTTPRoutes KServe creates (httproute_reconciler.go).

Expected objects are transcribed from KServe's Go tests; those compare ``spec`` after the API server has defaulted
``group: ""`` and ``weight: 1`` into backendRefs, which KServe itself does not write, so they are absent here.
"""

from __future__ import annotations

import json
from typing import Any

from kserve_compile.inputs.config import KServeConfig, parse_config
from kserve_compile.plan.routes import RoutedComponent, RouteInput
from kserve_compile.render.ingress.standard import standard_ingress

GATEWAY_PARENT = {
    "group": "gateway.networking.k8s.io",
    "kind": "Gateway",
    "namespace": "kserve",
    "name": "kserve-ingress-gateway",
}
STANDARD_ANNOTATIONS = {"serving.kserve.io/deploymentMode": "Standard", "serving.kserve.io/autoscalerClass": "hpa"}


def raw_kube_config(**ingress: Any) -> KServeConfig:
    """KServe's getRawKubeTestConfigs (suite_test.go:116-165) with ``ingress`` fields merged in."""
    base = {
        "kserveIngressGateway": "kserve/kserve-ingress-gateway",
        "ingressGateway": "knative-serving/knative-ingress-gateway",
        "localGateway": "knative-serving/knative-local-gateway",
        "localGatewayService": "knative-local-gateway.istio-system.svc.cluster.local",
        "enableGatewayApi": True,
        "additionalIngressDomains": ["additional.example.com"],
    }
    return parse_config(
        {
            "ingress": json.dumps({**base, **ingress}),
            "deploy": json.dumps({"defaultDeploymentMode": "Knative"}),
            "inferenceService": "{}",
        }
    )


def comp(component: str, service: str, timeout: int | None = None, ports: tuple[dict, ...] = ()) -> RoutedComponent:
    return RoutedComponent(component=component, service_name=service, timeout=timeout, service_ports=ports)


def isvc(
    name: str,
    *components: RoutedComponent,
    namespace: str = "default",
    labels: dict | None = None,
    annotations: dict | None = None,
    canaries: tuple[tuple[str, int], ...] = (),
) -> RouteInput:
    return RouteInput(
        name=name,
        namespace=namespace,
        labels=labels or {},
        annotations=STANDARD_ANNOTATIONS if annotations is None else annotations,
        components={c.component: c for c in components},
        canaries=canaries,
    )


def header_filter(name: str, namespace: str) -> list[dict]:
    return [
        {
            "type": "RequestHeaderModifier",
            "requestHeaderModifier": {
                "set": [
                    {"name": "KServe-Isvc-Name", "value": name},
                    {"name": "KServe-Isvc-Namespace", "value": namespace},
                ]
            },
        }
    ]


def rule(
    isvc_name: str, regex: str, service: str, timeout: str | None, port: int = 80, namespace: str = "default"
) -> dict:
    out: dict[str, Any] = {
        "matches": [{"path": {"type": "RegularExpression", "value": regex}}],
        "filters": header_filter(isvc_name, namespace),
        "backendRefs": [{"kind": "Service", "name": service, "namespace": namespace, "port": port}],
    }
    if timeout is not None:
        out["timeouts"] = {"request": timeout}
    return out


def route(
    name: str,
    hostnames: list[str],
    rules: list[dict],
    namespace: str = "default",
    annotations: dict | None = None,
    labels: dict | None = None,
) -> dict:
    meta: dict[str, Any] = {"name": name, "namespace": namespace}
    if labels:
        meta["labels"] = labels
    meta["annotations"] = STANDARD_ANNOTATIONS if annotations is None else annotations
    if not meta["annotations"]:
        del meta["annotations"]
    return {
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": "HTTPRoute",
        "metadata": meta,
        "spec": {"parentRefs": [GATEWAY_PARENT], "hostnames": hostnames, "rules": rules},
    }


ALL = r"^/.*$"
EXPLAIN = r"^/v1/models/[\w-]+:explain$"


def test_predictor_only() -> None:
    # rawkube_controller_test.go:68-339 "Should have httproute/service/deployment/httproute created" (raw-foo, 30s).
    got = standard_ingress(isvc("raw-foo", comp("predictor", "raw-foo-predictor", 30)), raw_kube_config())
    assert got == [
        route(
            "raw-foo-predictor",
            ["raw-foo-predictor-default.example.com"],
            [rule("raw-foo", ALL, "raw-foo-predictor", "30s")],
        ),
        route(
            "raw-foo",
            ["raw-foo-default.example.com", "raw-foo-default.additional.example.com"],
            [rule("raw-foo", ALL, "raw-foo-predictor", "30s")],
        ),
    ]


def test_domain_template() -> None:
    # rawkube_controller_test.go:4063-4262 (domainTemplate "{{ .Name }}.{{ .Namespace }}.{{ .IngressDomain }}",
    # no timeout → KServe's 60s default).
    cfg = raw_kube_config(
        ingressDomain="example.com", domainTemplate="{{ .Name }}.{{ .Namespace }}.{{ .IngressDomain }}"
    )
    got = standard_ingress(isvc("model", comp("predictor", "model-predictor")), cfg)
    assert got == [
        route(
            "model-predictor", ["model-predictor.default.example.com"], [rule("model", ALL, "model-predictor", "60s")]
        ),
        route(
            "model",
            ["model.default.example.com", "model.default.additional.example.com"],
            [rule("model", ALL, "model-predictor", "60s")],
        ),
    ]


def test_transformer() -> None:
    # rawkube_controller_test.go:4473-5050 (raw-foo-trans; transformer timeout 30s, predictor default 60s).
    got = standard_ingress(
        isvc(
            "raw-foo-trans",
            comp("predictor", "raw-foo-trans-predictor"),
            comp("transformer", "raw-foo-trans-transformer", 30),
        ),
        raw_kube_config(),
    )
    assert got == [
        route(
            "raw-foo-trans-predictor",
            ["raw-foo-trans-predictor-default.example.com"],
            [rule("raw-foo-trans", ALL, "raw-foo-trans-predictor", "60s")],
        ),
        route(
            "raw-foo-trans-transformer",
            ["raw-foo-trans-transformer-default.example.com"],
            [rule("raw-foo-trans", ALL, "raw-foo-trans-transformer", "30s")],
        ),
        route(
            "raw-foo-trans",
            ["raw-foo-trans-default.example.com", "raw-foo-trans-default.additional.example.com"],
            [rule("raw-foo-trans", ALL, "raw-foo-trans-transformer", "30s")],
        ),
    ]


def test_explainer() -> None:
    # rawkube_controller_test.go:5280-5830 (raw-foo-exp; explainer timeout 30s, predictor default 60s).
    got = standard_ingress(
        isvc("raw-foo-exp", comp("predictor", "raw-foo-exp-predictor"), comp("explainer", "raw-foo-exp-explainer", 30)),
        raw_kube_config(),
    )
    assert got == [
        route(
            "raw-foo-exp-predictor",
            ["raw-foo-exp-predictor-default.example.com"],
            [rule("raw-foo-exp", ALL, "raw-foo-exp-predictor", "60s")],
        ),
        route(
            "raw-foo-exp-explainer",
            ["raw-foo-exp-explainer-default.example.com"],
            [rule("raw-foo-exp", ALL, "raw-foo-exp-explainer", "30s")],
        ),
        route(
            "raw-foo-exp",
            ["raw-foo-exp-default.example.com", "raw-foo-exp-default.additional.example.com"],
            [
                rule("raw-foo-exp", EXPLAIN, "raw-foo-exp-explainer", "30s"),
                rule("raw-foo-exp", ALL, "raw-foo-exp-predictor", "60s"),
            ],
        ),
    ]


def test_path_template() -> None:
    # rawkube_controller_test.go:6062-6300 (pathTemplate "/serving/{{ .Namespace }}/{{ .Name }}", predictor 30s).
    cfg = raw_kube_config(ingressDomain="example.com", pathTemplate="/serving/{{ .Namespace }}/{{ .Name }}")
    got = standard_ingress(isvc("raw-foo-path", comp("predictor", "raw-foo-path-predictor", 30)), cfg)
    assert got == [
        route(
            "raw-foo-path-predictor",
            ["raw-foo-path-predictor-default.example.com"],
            [rule("raw-foo-path", ALL, "raw-foo-path-predictor", "30s")],
        ),
        route(
            "raw-foo-path",
            ["raw-foo-path-default.example.com", "raw-foo-path-default.additional.example.com", "example.com"],
            [
                rule("raw-foo-path", ALL, "raw-foo-path-predictor", "30s"),
                rule("raw-foo-path", "/serving/default/raw-foo-path/", "raw-foo-path-predictor", "30s"),
            ],
        ),
    ]


def _top_level_test_isvc(*extra: RoutedComponent) -> list[dict]:
    cfg = raw_kube_config(
        kserveIngressGateway="kserve/kserve-gateway",
        pathTemplate="/serving/{{ .Namespace }}/{{ .Name }}",
        ingressDomain="example.com",
    )
    return standard_ingress(isvc("test-isvc", comp("predictor", "test-isvc-predictor"), *extra, annotations={}), cfg)


def test_path_template_with_explainer() -> None:
    # httproute_reconciler_test.go:901-1126 "Path based routing with explainer" (createRawTopLevelHTTPRoute).
    top = _top_level_test_isvc(comp("explainer", "test-isvc-explainer"))[-1]
    assert top["metadata"] == {"name": "test-isvc", "namespace": "default"}
    assert top["spec"] == {
        "parentRefs": [{**GATEWAY_PARENT, "name": "kserve-gateway"}],
        "hostnames": ["test-isvc-default.example.com", "test-isvc-default.additional.example.com", "example.com"],
        "rules": [
            rule("test-isvc", EXPLAIN, "test-isvc-explainer", "60s"),
            rule("test-isvc", ALL, "test-isvc-predictor", "60s"),
            rule("test-isvc", r"/serving/default/test-isvc(/v1/models/[\w-]+:explain)$", "test-isvc-explainer", "60s"),
            rule("test-isvc", "/serving/default/test-isvc/", "test-isvc-predictor", "60s"),
        ],
    }


def test_path_template_with_transformer() -> None:
    # httproute_reconciler_test.go:1127-1306 "Path based routing with transformer".
    top = _top_level_test_isvc(comp("transformer", "test-isvc-transformer"))[-1]
    assert top["spec"] == {
        "parentRefs": [{**GATEWAY_PARENT, "name": "kserve-gateway"}],
        "hostnames": ["test-isvc-default.example.com", "test-isvc-default.additional.example.com", "example.com"],
        "rules": [
            rule("test-isvc", ALL, "test-isvc-transformer", "60s"),
            rule("test-isvc", "/serving/default/test-isvc/", "test-isvc-transformer", "60s"),
        ],
    }


def test_path_template_with_transformer_and_explainer() -> None:
    # Both Go cases above combined, with distinct timeouts; the trailing "/" of the rendered path is trimmed
    # before the rule regexes are built (httproute_reconciler.go:630-686).
    cfg = raw_kube_config(
        ingressDomain="example.com", pathTemplate="/serving/{{ .Namespace }}/{{ .Name }}/", additionalIngressDomains=[]
    )
    got = standard_ingress(
        isvc(
            "test-isvc",
            comp("predictor", "test-isvc-predictor"),
            comp("transformer", "test-isvc-transformer", 20),
            comp("explainer", "test-isvc-explainer", 40),
            annotations={},
        ),
        cfg,
    )
    assert got[-1] == route(
        "test-isvc",
        ["test-isvc-default.example.com", "example.com"],
        [
            rule("test-isvc", EXPLAIN, "test-isvc-explainer", "40s"),
            rule("test-isvc", ALL, "test-isvc-transformer", "20s"),
            rule("test-isvc", r"/serving/default/test-isvc(/v1/models/[\w-]+:explain)$", "test-isvc-explainer", "40s"),
            rule("test-isvc", "/serving/default/test-isvc/", "test-isvc-transformer", "20s"),
        ],
        annotations={},
    )
    assert [r["metadata"]["name"] for r in got] == [
        "test-isvc-predictor",
        "test-isvc-transformer",
        "test-isvc-explainer",
        "test-isvc",
    ]


def test_predictor_name_keeps_stable_route_name_and_host() -> None:
    # httproute_reconciler.go:266-268: route name/host without predictor.name, backend with it.
    got = standard_ingress(
        isvc("foo", comp("predictor", "foo-blue-predictor")), raw_kube_config(additionalIngressDomains=[])
    )
    assert got == [
        route("foo-predictor", ["foo-predictor-default.example.com"], [rule("foo", ALL, "foo-blue-predictor", "60s")]),
        route("foo", ["foo-default.example.com"], [rule("foo", ALL, "foo-blue-predictor", "60s")]),
    ]


def test_no_routes_when_disabled_cluster_local_or_stopped() -> None:
    # httproute_reconciler.go:1106-1162; rawkube_controller_test.go disableIngressCreation cases;
    # httproute_reconciler_test.go:2448-2494 (cluster-local label and domain).
    predictor = comp("predictor", "m-predictor")
    assert standard_ingress(isvc("m", predictor), raw_kube_config(disableIngressCreation=True)) == []
    local = isvc("m", predictor, labels={"networking.kserve.io/visibility": "cluster-local"})
    assert standard_ingress(local, raw_kube_config()) == []
    assert standard_ingress(isvc("m", predictor), raw_kube_config(ingressDomain="svc.cluster.local")) == []
    stopped = isvc("m", predictor, annotations={"serving.kserve.io/stop": "True"})
    assert standard_ingress(stopped, raw_kube_config()) == []
    # Knative's visibility label does not make a Standard-mode isvc cluster-local.
    knative_local = isvc("m", predictor, labels={"networking.knative.dev/visibility": "cluster-local"})
    assert len(standard_ingress(knative_local, raw_kube_config())) == 2


def test_disable_httproute_timeout_omits_timeouts_even_with_component_timeout() -> None:
    # httproute_reconciler_test.go:3392-3463 (TestCreateRawPredictorHTTPRouteDisableTimeout).
    cfg = raw_kube_config(disableHTTPRouteTimeout=True, additionalIngressDomains=[])
    got = standard_ingress(isvc("m", comp("predictor", "m-predictor", 45), annotations={}), cfg)
    assert got == [
        route(
            "m-predictor", ["m-predictor-default.example.com"], [rule("m", ALL, "m-predictor", None)], annotations={}
        ),
        route("m", ["m-default.example.com"], [rule("m", ALL, "m-predictor", None)], annotations={}),
    ]


def test_dual_protocol_service_gets_grpc_rule_first() -> None:
    # httproute_reconciler.go:143-209 (detectServiceProtocolPorts): a Service with an HTTP and a gRPC port. No Go test
    # covers it end to end; the expected rules follow createGRPCRouteMatches/createHTTPRouteMatches.
    ports = (
        {"name": "http", "port": 80, "protocol": "TCP", "targetPort": 8080},
        {"name": "grpc-port", "port": 8081, "protocol": "TCP", "targetPort": 8081, "appProtocol": "kubernetes.io/h2c"},
    )
    got = standard_ingress(
        isvc("d", comp("predictor", "d-predictor", 10, ports), annotations={}),
        raw_kube_config(additionalIngressDomains=[]),
    )
    grpc_rule = {
        "matches": [
            {
                "path": {"type": "RegularExpression", "value": r"^/inference\.GRPCInferenceService/.*$"},
                "headers": [{"type": "RegularExpression", "name": "content-type", "value": "^application/grpc.*"}],
            }
        ],
        "filters": header_filter("d", "default"),
        "backendRefs": [{"kind": "Service", "name": "d-predictor", "namespace": "default", "port": 8081}],
        "timeouts": {"request": "10s"},
    }
    expected_rules = [grpc_rule, rule("d", ALL, "d-predictor", "10s", port=80)]
    assert got == [
        route("d-predictor", ["d-predictor-default.example.com"], expected_rules, annotations={}),
        route("d", ["d-default.example.com"], expected_rules, annotations={}),
    ]


def test_single_port_service_keeps_single_rule() -> None:
    ports = ({"name": "grpc", "port": 80, "protocol": "TCP", "targetPort": 9000, "appProtocol": "kubernetes.io/h2c"},)
    got = standard_ingress(
        isvc("g", comp("predictor", "g-predictor", None, ports), annotations={}),
        raw_kube_config(additionalIngressDomains=[]),
    )
    assert got[0]["spec"]["rules"] == [rule("g", ALL, "g-predictor", "60s")]


def test_annotation_and_label_filtering() -> None:
    # HTTPRoute metadata: isvc annotations/labels minus the disallowed lists (httproute_reconciler.go:273-279),
    # which only exist when the inferenceService key is present (controlplane.md §1.2).
    annotations = {"keep": "1", "kubectl.kubernetes.io/last-applied-configuration": "{}", "modelFormat": "x"}
    labels = {"team": "a", "networking.knative.dev/visibility": "cluster-local"}
    got = standard_ingress(
        isvc("f", comp("predictor", "f-predictor"), labels=labels, annotations=annotations),
        raw_kube_config(additionalIngressDomains=[]),
    )
    for r in got:
        assert r["metadata"] == {
            "name": r["metadata"]["name"],
            "namespace": "default",
            "labels": {"team": "a"},
            "annotations": {"keep": "1"},
        }
    no_isvc_key = {"present_keys": frozenset({"ingress"})}
    unfiltered = raw_kube_config(additionalIngressDomains=[]).model_copy(update=no_isvc_key)
    route_input = isvc("f", comp("predictor", "f-predictor"), labels=labels, annotations=annotations)
    got = standard_ingress(route_input, unfiltered)
    assert got[0]["metadata"]["annotations"] == annotations
    assert got[0]["metadata"]["labels"] == labels


def test_unready_canaries_weight_stable_backend_100() -> None:
    # httproute_reconciler_test.go:3630-3740 ("canary not ready" / "no canary statuses"): stable alone, weight 100,
    # on the predictor and top-level routes only.
    route_input = isvc(
        "my-model",
        comp("predictor", "my-model-predictor"),
        comp("transformer", "my-model-transformer"),
        annotations={},
        canaries=(("my-model-v2-predictor", 20),),
    )
    got = standard_ingress(route_input, raw_kube_config(additionalIngressDomains=[]))
    predictor_route, transformer_route, top = got
    assert predictor_route["spec"]["rules"][0]["backendRefs"] == [
        {"kind": "Service", "name": "my-model-predictor", "namespace": "default", "port": 80, "weight": 100}
    ]
    assert transformer_route["spec"]["rules"][0]["backendRefs"] == [
        {"kind": "Service", "name": "my-model-transformer", "namespace": "default", "port": 80}
    ]
    assert top["spec"]["rules"][0]["backendRefs"] == [
        {"kind": "Service", "name": "my-model-transformer", "namespace": "default", "port": 80, "weight": 100}
    ]


def test_ready_canaries_split_traffic_on_every_rule() -> None:
    # httproute_reconciler_test.go:3515-3601 ("multiple canaries all ready", "dual-protocol rules all ready").
    ports = ({"name": "http", "port": 80}, {"name": "grpc", "port": 9090})
    route_input = isvc(
        "my-model",
        comp("predictor", "my-model-predictor", None, ports),
        annotations={},
        canaries=(("my-model-v2-predictor", 20), ("my-model-v3-predictor", 30)),
    )
    got = standard_ingress(route_input, raw_kube_config(additionalIngressDomains=[]), ready_canaries=True)
    for r in (got[0], got[1]):
        backends = [rl["backendRefs"] for rl in r["spec"]["rules"]]
        assert backends == [
            [
                {"kind": "Service", "name": n, "namespace": "default", "port": port, "weight": w}
                for n, w in (("my-model-predictor", 50), ("my-model-v2-predictor", 20), ("my-model-v3-predictor", 30))
            ]
            for port in (9090, 80)
        ]
