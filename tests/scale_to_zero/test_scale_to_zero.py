"""Scale to zero in Standard mode through KEDA's HTTP add-on: what the opt-in renders, where it is refused, and that
without it KServe's objects are untouched."""

from __future__ import annotations

from pathlib import Path

import pytest

from kserve_compile.errors import CompileError

from .helpers import OPT_IN, config, errors, isvc, kinds, notes, one, rendered, run, sklearn

SCALED = {OPT_IN: "true"}


# --- what the opt-in renders ---------------------------------------------------------------------------------------


def test_the_annotation_replaces_the_hpa_with_an_http_scaled_object() -> None:
    objects = rendered(isvc(sklearn(maxReplicas=3), SCALED))
    assert not [o for o in objects if o["kind"] in ("HorizontalPodAutoscaler", "ScaledObject")]
    spec = one(objects, "HTTPScaledObject", "iris-predictor")["spec"]
    assert spec["replicas"] == {"min": 0, "max": 3}
    assert spec["scaleTargetRef"] == {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "name": "iris-predictor",
        "service": "iris-predictor",
        "port": 80,
    }
    assert spec["scalingMetric"] == {"concurrency": {"targetValue": 100}}  # the add-on's default metric, written
    assert "scaledownPeriod" not in spec


def test_the_deployment_and_service_are_kserves() -> None:
    plain = {(o["kind"], o["metadata"]["name"]): o for o in rendered(isvc())}
    scaled = {(o["kind"], o["metadata"]["name"]): o for o in rendered(isvc(annotations={OPT_IN: "false"}))}
    for key in (("Deployment", "iris-predictor"), ("Service", "iris-predictor")):
        a, b = plain[key], scaled[key]
        b["metadata"]["annotations"].pop(OPT_IN)
        b["spec"].get("template", {}).get("metadata", {}).get("annotations", {}).pop(OPT_IN, None)
        assert a == b


@pytest.mark.parametrize(
    ("fields", "metric"),
    [
        ({"scaleMetric": "concurrency", "scaleTarget": 7}, {"concurrency": {"targetValue": 7}}),
        ({"scaleMetric": "rps", "scaleTarget": 20}, {"requestRate": {"targetValue": 20}}),
        ({"scaleTarget": 3}, {"concurrency": {"targetValue": 3}}),  # no metric: the add-on's, concurrency
    ],
)
def test_kserves_scale_metric_maps_to_the_add_ons(fields: dict, metric: dict) -> None:
    spec = one(rendered(isvc(sklearn(**fields), SCALED)), "HTTPScaledObject")["spec"]
    assert spec["scalingMetric"] == metric


def test_an_explicit_min_replicas_is_kept_and_max_is_never_below_one() -> None:
    spec = one(rendered(isvc(sklearn(minReplicas=2, maxReplicas=5), SCALED)), "HTTPScaledObject")["spec"]
    assert spec["replicas"] == {"min": 2, "max": 5}
    spec = one(rendered(isvc(sklearn(), SCALED)), "HTTPScaledObject")["spec"]
    assert spec["replicas"] == {"min": 0, "max": 1}  # KServe's HPA with no maxReplicas: max = min = 1


def test_a_keda_autoscaled_component_gets_no_scaled_object_of_its_own() -> None:
    objects = rendered(isvc(annotations={**SCALED, "serving.kserve.io/autoscalerClass": "keda"}))
    assert [k for k in kinds(objects) if k[0] in ("ScaledObject", "HTTPScaledObject")] == [
        ("HTTPScaledObject", "iris-predictor")
    ]


def test_the_proxy_service_resolves_to_the_configured_interceptor() -> None:
    cm = config(
        isvcCompile={
            "scaleToZero": {"interceptor": {"namespace": "http", "name": "icpt", "port": 9000}, "scaledownPeriod": 60}
        }
    )
    objects = rendered(cm, isvc(annotations=SCALED))
    proxy = one(objects, "Service", "iris-predictor-proxy")["spec"]
    assert proxy == {
        "type": "ExternalName",
        "externalName": "icpt.http.svc.cluster.local",
        "ports": [{"name": "http", "port": 9000, "protocol": "TCP"}],
    }
    spec = one(objects, "HTTPScaledObject")["spec"]
    assert spec["scaledownPeriod"] == 60
    assert spec["hosts"][-3:] == [
        "iris-predictor-proxy.ml.svc.cluster.local",
        "iris-predictor-proxy.ml.svc",
        "iris-predictor-proxy.ml",
    ]
    rule = one(objects, "Ingress")["spec"]["rules"][0]
    assert rule["http"]["paths"][0]["backend"] == {
        "service": {"name": "iris-predictor-proxy", "port": {"number": 9000}}
    }


def test_the_ingress_hosts_go_to_the_component_they_route_to() -> None:
    objects = rendered(isvc(annotations=SCALED))
    ingress_hosts = [r["host"] for r in one(objects, "Ingress")["spec"]["rules"]]
    assert ingress_hosts == ["iris-ml.example.com", "iris-predictor-ml.example.com"]
    assert one(objects, "HTTPScaledObject")["spec"]["hosts"][:2] == ingress_hosts


def test_a_transformer_reaches_a_scaled_predictor_through_its_proxy() -> None:
    transformer = {"containers": [{"name": "t", "image": "kserve/image-transformer:latest"}]}
    objects = rendered(isvc(annotations=SCALED, transformer=transformer))
    args = one(objects, "Deployment", "iris-transformer")["spec"]["template"]["spec"]["containers"][0]["args"]
    assert args[args.index("--predictor_host") + 1] == "iris-predictor-proxy.ml:8080"
    # its own host is in the predictor's HTTPScaledObject, which the interceptor routes on
    assert "iris-predictor-proxy.ml" in one(objects, "HTTPScaledObject", "iris-predictor")["spec"]["hosts"]


def test_a_predictor_host_the_user_wrote_is_left_alone() -> None:
    transformer = {"containers": [{"name": "t", "image": "t:1", "args": ["--predictor_host", "elsewhere:80"]}]}
    objects = rendered(isvc(annotations=SCALED, transformer=transformer))
    args = one(objects, "Deployment", "iris-transformer")["spec"]["template"]["spec"]["containers"][0]["args"]
    assert args[args.index("--predictor_host") + 1] == "elsewhere:80"


def test_one_component_may_opt_in_alone() -> None:
    transformer = {"annotations": {OPT_IN: "true"}, "containers": [{"name": "t", "image": "t:1"}]}
    objects = rendered(isvc(transformer=transformer))
    assert [k for k in kinds(objects) if k[0] in ("HTTPScaledObject", "HorizontalPodAutoscaler")] == [
        ("HTTPScaledObject", "iris-transformer"),
        ("HorizontalPodAutoscaler", "iris-predictor"),
    ]
    ingress = one(objects, "Ingress")["spec"]["rules"]
    backends = {r["host"]: r["http"]["paths"][0]["backend"]["service"]["name"] for r in ingress}
    assert backends["iris-ml.example.com"] == "iris-transformer-proxy"
    assert backends["iris-predictor-ml.example.com"] == "iris-predictor"  # KServe's, untouched


def test_gateway_api_routes_go_to_the_interceptor_with_the_host_it_matches() -> None:
    cm = config(
        ingress={
            "enableGatewayApi": True,
            "kserveIngressGateway": "kserve/kserve-ingress-gateway",
            "ingressGateway": "knative-serving/knative-ingress-gateway",
            "ingressDomain": "example.com",
        }
    )
    objects = rendered(cm, isvc(annotations=SCALED))
    route = one(objects, "HTTPRoute", "iris")
    rule = route["spec"]["rules"][0]
    assert rule["backendRefs"] == [
        {"kind": "Service", "name": "keda-add-ons-http-interceptor-proxy", "namespace": "keda", "port": 8080}
    ]
    assert rule["filters"][-1] == {
        "type": "URLRewrite",
        "urlRewrite": {"hostname": "iris-predictor-proxy.ml.svc.cluster.local"},
    }
    assert rule["filters"][-1]["urlRewrite"]["hostname"] in one(objects, "HTTPScaledObject")["spec"]["hosts"]
    grant = one(objects, "ReferenceGrant")
    assert grant["metadata"] == {
        "name": "iris.ml",
        "namespace": "keda",
        "labels": {"serving.kserve.io/inferenceservice": "iris"},
    }
    assert grant["spec"]["from"] == [{"group": "gateway.networking.k8s.io", "kind": "HTTPRoute", "namespace": "ml"}]


def test_no_reference_grant_when_the_interceptor_shares_the_namespace() -> None:
    cm = config(
        ingress={
            "enableGatewayApi": True,
            "kserveIngressGateway": "kserve/kserve-ingress-gateway",
            "ingressGateway": "knative-serving/knative-ingress-gateway",
        },
        isvcCompile={"scaleToZero": {"interceptor": {"namespace": "ml"}}},
    )
    assert not [o for o in rendered(cm, isvc(annotations=SCALED)) if o["kind"] == "ReferenceGrant"]


def test_a_headless_service_is_reached_on_the_container_port() -> None:
    cm = config(service={"serviceClusterIPNone": True})
    objects = rendered(cm, isvc(annotations=SCALED))
    assert one(objects, "HTTPScaledObject")["spec"]["scaleTargetRef"]["port"] == 8080


def test_a_stopped_isvc_renders_nothing_for_the_add_on() -> None:
    result = run(isvc(annotations={**SCALED, "serving.kserve.io/stop": "true"}))
    assert not [o for o in result.objects if o["kind"] in ("HTTPScaledObject", "Service", "ReferenceGrant")]
    assert "scaleToZero" not in result.status_rows()[0][1]


# --- status --------------------------------------------------------------------------------------------------------


def test_status_names_the_proxy_address_and_the_add_on() -> None:
    [(ref, status)] = run(isvc(annotations=SCALED)).status_rows()
    assert ref == "ml/iris"
    assert status["address"] == {"url": "http://iris-predictor-proxy.ml.svc.cluster.local:8080"}
    assert status["url"] == "http://iris-ml.example.com"  # the ingress URL is KServe's
    assert status["scaleToZero"] == {
        "interceptor": "keda/keda-add-ons-http-interceptor-proxy:8080",
        "components": {
            "predictor": {
                "httpScaledObject": "iris-predictor",
                "address": "http://iris-predictor-proxy.ml.svc.cluster.local:8080",
                "minReplicas": 0,
                "maxReplicas": 1,
            }
        },
    }


def test_an_inference_graph_step_calls_a_scaled_isvc_through_its_proxy() -> None:
    result = run(isvc(annotations=SCALED))
    target = result.isvc_targets()[("ml", "iris")]
    assert "iris-predictor-proxy.ml.svc.cluster.local:8080" in str(target)


# --- cluster-wide --------------------------------------------------------------------------------------------------

CLUSTER_WIDE = {"isvcCompile": {"scaleToZero": {"enabled": True}}}


def test_cluster_wide_scales_only_components_with_min_replicas_zero() -> None:
    transformer = {"minReplicas": 0, "containers": [{"name": "t", "image": "t:1"}]}
    objects = rendered(config(**CLUSTER_WIDE), isvc(sklearn(minReplicas=1), transformer=transformer))
    assert [k for k in kinds(objects) if k[0] in ("HTTPScaledObject", "HorizontalPodAutoscaler")] == [
        ("HTTPScaledObject", "iris-transformer"),
        ("HorizontalPodAutoscaler", "iris-predictor"),
    ]


def test_cluster_wide_is_turned_off_by_the_annotation() -> None:
    objects = rendered(config(**CLUSTER_WIDE), isvc(sklearn(minReplicas=0), {OPT_IN: "false"}))
    assert one(objects, "HorizontalPodAutoscaler")["spec"]["minReplicas"] == 1


def test_cluster_wide_leaves_what_cannot_work_to_kserve_with_a_note() -> None:
    result = run(config(**CLUSTER_WIDE), isvc(sklearn(minReplicas=0, scaleMetric="cpu")))
    assert one(result.objects, "HorizontalPodAutoscaler")["spec"]["minReplicas"] == 1
    [note] = [n for n in notes(result) if "KServe's autoscaler" in n]
    assert "predictor keeps KServe's autoscaler" in note and "[cpu] is not a supported metric" in note


def test_cluster_wide_leaves_knative_mode_alone() -> None:
    knative = isvc(sklearn(minReplicas=0), {"serving.kserve.io/deploymentMode": "Knative"})
    objects = rendered(config(**CLUSTER_WIDE), knative)
    assert not [o for o in objects if o["kind"] == "HTTPScaledObject"]


# --- without the opt-in: KServe's behaviour, and a hint -------------------------------------------------------------


def test_without_the_opt_in_min_replicas_zero_is_kserves_hpa_with_a_hint() -> None:
    result = run(isvc(sklearn(minReplicas=0)))
    assert one(result.objects, "HorizontalPodAutoscaler")["spec"]["minReplicas"] == 1
    assert not [o for o in result.objects if o["kind"] == "HTTPScaledObject"]
    [hint] = [n for n in notes(result) if OPT_IN in n]
    assert hint.startswith("predictor: minReplicas 0 keeps 1 replica in Standard mode")
    assert "docs/scale-to-zero.md" in hint


def test_no_hint_for_keda_which_scales_to_zero_itself() -> None:
    result = run(isvc(sklearn(minReplicas=0), {"serving.kserve.io/autoscalerClass": "keda"}))
    assert one(result.objects, "ScaledObject")["spec"]["minReplicaCount"] == 0
    assert not [n for n in notes(result) if OPT_IN in n]


# --- refused where it cannot work (the annotation) ------------------------------------------------------------------

GRPC_ONLY = sklearn(
    model={
        "modelFormat": {"name": "sklearn"},
        "storageUri": "gs://b/m",
        "ports": [{"name": "h2c", "containerPort": 9000, "protocol": "TCP"}],
    }
)


@pytest.mark.parametrize(
    ("obj", "path", "words"),
    [
        (
            isvc(sklearn(), {**SCALED, "serving.kserve.io/deploymentMode": "Knative"}),
            f"metadata.annotations[{OPT_IN}]",
            "is for Standard deployment mode: Knative mode scales to zero itself, with minReplicas: 0",
        ),
        (
            isvc(sklearn(), {**SCALED, "serving.kserve.io/autoscalerClass": "none"}),
            "metadata.annotations[serving.kserve.io/autoscalerClass]",
            "replaces the component's HPA or KEDA autoscaler: autoscalerClass none has none",
        ),
        (isvc(GRPC_ONLY, SCALED), "spec.predictor", "needs an HTTP port: the predictor Service has only gRPC ports"),
        (
            isvc(sklearn(scaleMetric="memory"), SCALED),
            "spec.predictor.scaleMetric",
            "[memory] is not a supported metric for scale to zero through KEDA's HTTP add-on",
        ),
        (
            isvc(sklearn(scaleMetric="rps", scaleTarget=0), SCALED),
            "spec.predictor.scaleTarget",
            "the target for rps should be at least 1",
        ),
        (
            isvc({**sklearn(), "annotations": {OPT_IN: "yes"}}),
            f"spec.predictor.annotations[{OPT_IN}]",
            f'invalid value "yes" for {OPT_IN}: must be "true" or "false"',
        ),
        (
            isvc(
                sklearn(
                    autoScaling={
                        "metrics": [
                            {
                                "type": "Resource",
                                "resource": {
                                    "name": "cpu",
                                    "target": {"type": "Utilization", "averageUtilization": 50},
                                },
                            }
                        ]
                    }
                ),
                SCALED,
            ),
            "spec.predictor.autoScaling.metrics",
            "autoScaling.metrics do not apply",
        ),
        (
            isvc(sklearn(), SCALED, canary=[{"trafficPercent": 10, "predictor": {"name": "blue", **sklearn()}}]),
            "spec.canary",
            "does not support canaries (spec.canary)",
        ),
    ],
    ids=["knative", "autoscaler-none", "grpc-only", "memory-metric", "zero-target", "bad-value", "metrics", "canary"],
)
def test_the_annotation_is_an_error_where_the_add_on_cannot_work(obj: dict, path: str, words: str) -> None:
    [problem] = errors(obj)
    assert problem.path == path
    assert words in problem.message
    assert problem.kind == "InferenceService" and problem.name == "iris"


def test_multi_node_is_refused() -> None:
    predictor = {
        "model": {"modelFormat": {"name": "huggingface"}, "storageUri": "pvc://models/llama"},
        "workerSpec": {"containers": [{"name": "worker-container", "image": "kserve/huggingfaceserver:latest"}]},
    }
    [problem] = errors(isvc(predictor, {**SCALED, "serving.kserve.io/autoscalerClass": "none"}))
    assert problem.path == "spec.predictor.workerSpec"
    assert "cannot scale a multi-node predictor (workerSpec)" in problem.message


def test_a_grpc_port_beside_http_is_left_direct_with_a_note() -> None:
    cm = config(
        ingress={
            "enableGatewayApi": True,
            "kserveIngressGateway": "kserve/kserve-ingress-gateway",
            "ingressGateway": "knative-serving/knative-ingress-gateway",
        }
    )
    ports = [{"name": "http1", "containerPort": 8080, "protocol": "TCP"}, {"name": "grpc", "containerPort": 9000}]
    predictor = sklearn(model={"modelFormat": {"name": "sklearn"}, "storageUri": "gs://b/m", "ports": ports})
    result = run(cm, isvc(predictor, SCALED))
    rules = one(result.objects, "HTTPRoute", "iris-predictor")["spec"]["rules"]
    assert [r["backendRefs"][0]["name"] for r in rules] == ["iris-predictor", "keda-add-ons-http-interceptor-proxy"]
    assert rules[0]["backendRefs"][0]["port"] == 9000
    assert [n for n in notes(result) if "gRPC port 9000 of iris-predictor is not routed through" in n]


# --- the config key ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "path", "words"),
    [
        ({"scaleToZero": {"enabeld": True}}, "data.isvcCompile.scaleToZero.enabeld", 'did you mean "enabled"'),
        ({"scaleToZero": {"enabled": "yes"}}, "data.isvcCompile.scaleToZero.enabled", "must be true or false"),
        (
            {"scaleToZero": {"interceptor": {"port": 0}}},
            "data.isvcCompile.scaleToZero.interceptor.port",
            "from 1 to 65535",
        ),
        (
            {"scaleToZero": {"interceptor": {"namespace": "Keda"}}},
            "data.isvcCompile.scaleToZero.interceptor.namespace",
            "DNS-1123 label",
        ),
        ({"scaleToZero": {"scaledownPeriod": -1}}, "data.isvcCompile.scaleToZero.scaledownPeriod", "integer from 0"),
        ({"other": {}}, "data.isvcCompile.other", 'unknown field "other"'),
        ("{not json", "data.isvcCompile", "unable to parse isvcCompile config json"),
    ],
)
def test_a_bad_config_key_is_located(value: object, path: str, words: str) -> None:
    cm = config(isvcCompile=value)
    with pytest.raises(CompileError) as caught:
        run(cm, isvc())
    [problem] = [p for p in caught.value.problems if p.severity == "error"]
    assert problem.path == path and words in problem.message
    assert problem.kind == "ConfigMap" and problem.line > 0


def test_kserves_own_keys_keep_their_meaning() -> None:
    """The project's key beside KServe's changes no object of an isvc that does not opt in."""
    plain = rendered(isvc(sklearn(minReplicas=1)))
    with_key = rendered(
        config(isvcCompile={"scaleToZero": {"enabled": True, "scaledownPeriod": 5}}), isvc(sklearn(minReplicas=1))
    )
    assert plain == with_key


# --- explain -------------------------------------------------------------------------------------------------------


def test_explain_names_the_add_on_for_what_it_wrote_and_the_input_for_the_rest() -> None:
    from kserve_compile.api import CompileOptions, render_result
    from kserve_compile.emit.explain import field_origin, select

    path = str(Path(__file__).resolve().parents[2] / "golden/scale-to-zero-ingress/input.yaml")
    objects = render_result([path], options=CompileOptions(trace=True)).objects

    def origin(ref: str, field: str) -> str:
        [obj] = select(objects, ref)
        return field_origin(obj, field).chain[0].describe()

    ours = "kserve-compile scale to zero (KEDA's HTTP add-on)"
    assert origin("HTTPScaledObject/torch-mnist-predictor", "spec.scaleTargetRef.service").startswith(ours)
    assert origin("HTTPScaledObject/torch-mnist-predictor", "spec.replicas.max").startswith(
        f"InferenceService/team-a/torch-mnist spec.predictor.maxReplicas ({path}:"
    )
    assert origin("Ingress/torch-mnist", "spec.rules[0].http.paths[0].backend.service.name").startswith(ours)
    assert origin("Ingress/torch-mnist", "spec.rules[0].host").startswith("KServe default (Ingress builder)")
    assert origin("Service/torch-mnist-predictor-proxy", "spec.externalName").startswith(ours)
    assert origin("Deployment/torch-mnist-transformer", "spec.template.spec.containers[0].args[3]").startswith(ours)


# --- apply ---------------------------------------------------------------------------------------------------------


def test_apply_leaves_the_replicas_of_a_deployment_the_add_on_scales_to_keda() -> None:
    from kserve_compile.apply.objects import strip_scaled_replicas
    from kserve_compile.apply.rbac import USES

    objects = rendered(isvc(annotations=SCALED))
    deployment = one(objects, "Deployment")
    with_replicas = {**deployment, "spec": {**deployment["spec"], "replicas": 1}}
    others = [o for o in objects if o["kind"] != "Deployment"]
    [stripped] = [o for o in strip_scaled_replicas([with_replicas, *others]) if o["kind"] == "Deployment"]
    assert "replicas" not in stripped["spec"]
    managed = {(u.api_version, u.kind) for u in USES if "patch" in u.verbs and u.child}
    assert {
        ("http.keda.sh/v1alpha1", "HTTPScaledObject"),
        ("gateway.networking.k8s.io/v1beta1", "ReferenceGrant"),
    } <= managed
