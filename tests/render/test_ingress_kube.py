"""Standard mode without Gateway API: the Kubernetes Ingress (kube_ingress_reconciler.go), and Standard status URLs."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kserve_compile.errors import InputError
from kserve_compile.inputs.config import KServeConfig, parse_config
from kserve_compile.plan.routes import RoutedComponent, RouteInput
from kserve_compile.plan.status import standard_status
from kserve_compile.render.ingress.standard import standard_ingress


def config(ingress: dict | None = None, **keys: str) -> KServeConfig:
    base = {
        "kserveIngressGateway": "kserve/kserve-ingress-gateway",
        "ingressGateway": "knative-serving/knative-ingress-gateway",
        "localGateway": "knative-serving/knative-local-gateway",
        "localGatewayService": "knative-local-gateway.istio-system.svc.cluster.local",
    }
    return parse_config({"ingress": json.dumps({**base, **(ingress or {})}), "inferenceService": "{}", **keys})


def isvc(
    name: str,
    *components: tuple[str, str],
    labels: dict | None = None,
    annotations: dict | None = None,
    ports: dict[str, tuple[dict, ...]] | None = None,
) -> RouteInput:
    ports = ports or {}
    return RouteInput(
        name=name,
        namespace="default",
        labels=labels or {},
        annotations=annotations or {},
        components={c: RoutedComponent(c, svc, None, ports.get(c, ())) for c, svc in components},
    )


def rule(host: str, service: str) -> dict:
    return {
        "host": host,
        "http": {
            "paths": [
                {
                    "path": "/",
                    "pathType": "Prefix",
                    "backend": {"service": {"name": service, "port": {"number": 80}}},
                }
            ]
        },
    }


def ingress_object(
    name: str, rules: list[dict], annotations: dict | None = None, class_name: str | None = None
) -> dict:
    meta: dict[str, Any] = {"name": name, "namespace": "default"}
    if annotations:
        meta["annotations"] = annotations
    spec: dict[str, Any] = {}
    if class_name is not None:
        spec["ingressClassName"] = class_name
    spec["rules"] = rules
    return {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": meta, "spec": spec}


STANDARD = {"serving.kserve.io/deploymentMode": "Standard", "serving.kserve.io/autoscalerClass": "hpa"}


def test_predictor_only() -> None:
    # rawkube_controller_test.go:8629-8686 (raw-foo, enableGatewayApi false, no ingressClassName).
    got = standard_ingress(isvc("raw-foo", ("predictor", "raw-foo-predictor"), annotations=STANDARD), config())
    assert got == [
        ingress_object(
            "raw-foo",
            [
                rule("raw-foo-default.example.com", "raw-foo-predictor"),
                rule("raw-foo-predictor-default.example.com", "raw-foo-predictor"),
            ],
            annotations=STANDARD,
        )
    ]


def test_annotations_are_unfiltered_and_class_name_is_set() -> None:
    # kube_ingress_reconciler.go:339-350: all isvc annotations, no labels, ingressClassName from the ConfigMap.
    annotations = {"kubectl.kubernetes.io/last-applied-configuration": "{}", "modelFormat": "sklearn", "a": "b"}
    got = standard_ingress(
        isvc("m", ("predictor", "m-predictor"), labels={"team": "x"}, annotations=annotations),
        config({"ingressClassName": "istio"}),
    )
    assert got == [
        ingress_object(
            "m",
            [
                rule("m-default.example.com", "m-predictor"),
                rule("m-predictor-default.example.com", "m-predictor"),
            ],
            annotations=annotations,
            class_name="istio",
        )
    ]


def test_explainer_without_transformer() -> None:
    # kube_ingress_reconciler.go:310-329: the top-level host goes to the predictor, no :explain routing.
    got = standard_ingress(isvc("e", ("predictor", "e-predictor"), ("explainer", "e-explainer")), config())
    assert got[0]["spec"]["rules"] == [
        rule("e-default.example.com", "e-predictor"),
        rule("e-explainer-default.example.com", "e-explainer"),
        rule("e-predictor-default.example.com", "e-predictor"),
    ]


def test_transformer_and_explainer_keep_kserve_oddities() -> None:
    # kube_ingress_reconciler.go:284-309: the explainer rule takes the transformer's host, and the transformer's
    # host routes to the predictor Service.
    got = standard_ingress(
        isvc("t", ("predictor", "t-blue-predictor"), ("transformer", "t-transformer"), ("explainer", "t-explainer")),
        config(),
    )
    assert got[0]["spec"]["rules"] == [
        rule("t-transformer-default.example.com", "t-explainer"),
        rule("t-default.example.com", "t-transformer"),
        rule("t-transformer-default.example.com", "t-blue-predictor"),
        rule("t-blue-predictor-default.example.com", "t-blue-predictor"),
    ]


def test_no_ingress_when_cluster_local_disabled_or_stopped() -> None:
    predictor = ("predictor", "m-predictor")
    assert (
        standard_ingress(isvc("m", predictor, labels={"networking.kserve.io/visibility": "cluster-local"}), config())
        == []
    )
    assert standard_ingress(isvc("m", predictor), config({"ingressDomain": "svc.cluster.local"})) == []
    assert standard_ingress(isvc("m", predictor), config({"disableIngressCreation": True})) == []
    assert standard_ingress(isvc("m", predictor, annotations={"serving.kserve.io/stop": "true"}), config()) == []


def test_invalid_domain_is_an_input_error() -> None:
    cfg = config({"domainTemplate": "{{ .Name }}_{{ .Namespace }}.{{ .IngressDomain }}"})
    with pytest.raises(InputError, match='^invalid domain name "m_default.example.com"'):
        standard_ingress(isvc("m", ("predictor", "m-predictor")), cfg)


def test_missing_predictor_is_a_located_error() -> None:
    with pytest.raises(InputError) as info:
        standard_ingress(isvc("m", ("transformer", "m-transformer")), config())
    assert info.value.path == "spec.predictor"


# --- status -------------------------------------------------------------------------------------------------------


def test_status_predictor_only() -> None:
    # tests_common.go:149-211 (getExpectedIsvcStatus): url, address and component URL of raw-foo.
    got = standard_status(isvc("raw-foo", ("predictor", "raw-foo-predictor")), config({"enableGatewayApi": True}))
    assert got == {
        "url": "http://raw-foo-default.example.com",
        "address": {"url": "http://raw-foo-predictor.default.svc.cluster.local"},
        "components": {"predictor": {"url": "http://raw-foo-predictor-default.example.com"}},
    }


def test_status_transformer() -> None:
    # rawkube_controller_test.go:5100-5131: address is the transformer Service; each component has its own URL.
    got = standard_status(
        isvc("raw-foo-trans", ("predictor", "raw-foo-trans-predictor"), ("transformer", "raw-foo-trans-transformer")),
        config({"enableGatewayApi": True}),
    )
    assert got == {
        "url": "http://raw-foo-trans-default.example.com",
        "address": {"url": "http://raw-foo-trans-transformer.default.svc.cluster.local"},
        "components": {
            "predictor": {"url": "http://raw-foo-trans-predictor-default.example.com"},
            "transformer": {"url": "http://raw-foo-trans-transformer-default.example.com"},
        },
    }


@pytest.mark.parametrize(
    ("ports", "suffix"),
    [
        # kube_ingress_reconciler_test.go:76-189 (TestCreateAddress), headless rows.
        ((), ":8080"),
        (({"name": "http", "port": 80, "targetPort": 8888, "protocol": "TCP"},), ":8888"),
        (
            (
                {"name": "grpc", "port": 8001, "targetPort": 8001, "protocol": "TCP"},
                {"name": "http", "port": 80, "targetPort": 8888, "protocol": "TCP"},
            ),
            ":8888",
        ),
        (({"name": "http", "port": 80, "targetPort": "http-serving", "protocol": "TCP"},), ":8080"),
        (
            (
                {
                    "name": "h2c",
                    "port": 8001,
                    "targetPort": 8001,
                    "protocol": "TCP",
                    "appProtocol": "kubernetes.io/h2c",
                },
                {"name": "http", "port": 80, "targetPort": 9000, "protocol": "TCP"},
            ),
            ":9000",
        ),
    ],
)
def test_status_headless_address_uses_target_port(ports: tuple[dict, ...], suffix: str) -> None:
    cfg = config(service=json.dumps({"serviceClusterIPNone": True}))
    got = standard_status(isvc("test-isvc", ("predictor", "test-isvc-predictor"), ports={"predictor": ports}), cfg)
    assert got["address"] == {"url": "http://test-isvc-predictor.default.svc.cluster.local" + suffix}


def test_status_https_scheme_only_changes_top_level_url() -> None:
    # kube_ingress_reconciler_test.go:224-322 (urlScheme=https rows): address stays http; component URLs are always
    # http (raw_kube_reconciler.go:228-236).
    got = standard_status(isvc("test-isvc", ("predictor", "test-isvc-predictor")), config({"urlScheme": "https"}))
    assert got == {
        "url": "https://test-isvc-default.example.com",
        "address": {"url": "http://test-isvc-predictor.default.svc.cluster.local"},
        "components": {"predictor": {"url": "http://test-isvc-predictor-default.example.com"}},
    }


def test_status_is_reported_when_ingress_is_not_created() -> None:
    # kube_ingress_reconciler_test.go:324-405 (disableIngressCreation with transformer; cluster-local label).
    trans = isvc("test-isvc", ("predictor", "test-isvc-predictor"), ("transformer", "test-isvc-transformer"))
    got = standard_status(trans, config({"disableIngressCreation": True}))
    assert got["url"] == "http://test-isvc-default.example.com"
    assert got["address"] == {"url": "http://test-isvc-transformer.default.svc.cluster.local"}
    local = isvc(
        "test-isvc", ("predictor", "test-isvc-predictor"), labels={"networking.kserve.io/visibility": "cluster-local"}
    )
    got = standard_status(local, config())
    assert got["url"] == "http://test-isvc-default.example.com"
    assert got["address"] == {"url": "http://test-isvc-predictor.default.svc.cluster.local"}


def test_status_component_url_uses_component_metadata_when_given() -> None:
    cfg = config({"domainTemplate": "{{ .Name }}.{{ .Labels.component }}.{{ .IngressDomain }}"})
    route = RouteInput(
        "m",
        "default",
        {"component": "isvc"},
        {},
        {
            "predictor": RoutedComponent("predictor", "m-predictor", None, (), labels={"component": "predictor"}),
        },
    )
    got = standard_status(route, cfg)
    assert got["url"] == "http://m.isvc.example.com"
    assert got["components"] == {"predictor": {"url": "http://m-predictor.predictor.example.com"}}


def test_status_of_stopped_isvc_has_no_url() -> None:
    stopped = isvc("m", ("predictor", "m-predictor"), annotations={"serving.kserve.io/stop": "true"})
    assert "url" not in standard_status(stopped, config())
    assert "url" not in standard_status(stopped, config({"enableGatewayApi": True}))
    # With HTTPRoutes skipped (ingress creation off), KServe sets the URLs before it looks at the stop annotation.
    assert standard_status(stopped, config({"enableGatewayApi": True, "disableIngressCreation": True}))["url"] == (
        "http://m-default.example.com"
    )
