"""InferenceGraph rendering, against KServe's expected objects.

Knative: ``pkg/controller/v1alpha1/inferencegraph/controller_test.go`` (initial-scale cases 89-453, singlenode1
455-582, singlenode2 584-720, singlenode3 722-895, singlenode4 1475-1619, stop 1065-1473). Standard:
``raw_ig_test.go`` (TestCreateInferenceGraphPodSpec 40-343, TestConstructGraphObjectMeta 345-509) and
``controller_test.go:897-994`` (igraw1).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from kserve_compile.errors import InputError
from kserve_compile.graph.graph_types import InferenceGraph
from kserve_compile.graph.render import graph_json, graph_status_url, render_graph
from kserve_compile.graph.targets import IsvcTarget
from kserve_compile.inputs.config import KServeConfig, parse_config

# controller_test.go:54-67 and raw_ig_test.go:44-65
ROUTER = {
    "image": "kserve/router:v0.10.0",
    "memoryRequest": "100Mi",
    "memoryLimit": "500Mi",
    "cpuRequest": "100m",
    "cpuLimit": "100m",
}
HEADERS = {"propagate": ["Authorization", "Intuit_tid"]}
SOME_SERVICE = {"root": {"routerType": "Sequence", "steps": [{"serviceUrl": "http://someservice.example.com"}]}}
BASIC_JSON = '{"nodes":{"root":{"routerType":"Sequence","steps":[{"serviceUrl":"http://someservice.example.com"}]}},"resources":{}}'
SECURITY = {
    "privileged": False,
    "runAsNonRoot": True,
    "readOnlyRootFilesystem": True,
    "allowPrivilegeEscalation": False,
    "capabilities": {"drop": ["ALL"]},
}
PROBE = {
    "httpGet": {"path": "/readyz", "port": 8080, "scheme": "HTTP"},
    "initialDelaySeconds": 5,
    "timeoutSeconds": 2,
    "periodSeconds": 5,
    "successThreshold": 1,
    "failureThreshold": 3,
}
DEFAULT_RESOURCES = {"limits": {"cpu": "100m", "memory": "500Mi"}, "requests": {"cpu": "100m", "memory": "100Mi"}}
TOLERATION = {"key": "key1", "operator": "Equal", "value": "value1", "effect": "NoSchedule"}


def config(router: dict[str, Any] | None = None, **extra: Any) -> KServeConfig:
    data = {
        "router": json.dumps(ROUTER if router is None else router),
        "deploy": json.dumps({"defaultDeploymentMode": "Standard"}),
    }
    data.update({k: json.dumps(v) for k, v in extra.items()})
    return parse_config(data)


def graph(
    name: str = "basic-ig",
    namespace: str = "default",
    nodes: dict | None = None,
    annotations: dict | None = None,
    labels: dict | None = None,
    **spec: Any,
) -> InferenceGraph:
    meta: dict[str, Any] = {"name": name, "namespace": namespace}
    if annotations:
        meta["annotations"] = annotations
    if labels:
        meta["labels"] = labels
    return InferenceGraph.model_validate(
        {
            "apiVersion": "serving.kserve.io/v1alpha1",
            "kind": "InferenceGraph",
            "metadata": meta,
            "spec": {"nodes": SOME_SERVICE if nodes is None else nodes, **spec},
        }
    )


def by_kind(objects: list[dict]) -> dict[str, dict]:
    return {o["kind"]: o for o in objects}


def ksvc(g: InferenceGraph, cfg: KServeConfig | None = None, **kw: Any) -> dict:
    (out,) = render_graph(g, cfg or config({**ROUTER, "headers": HEADERS}), "Knative", {}, **kw)
    return out


# --- Knative (controller_test.go) ---------------------------------------------------------------------------------


def test_knative_singlenode1_headers_propagate() -> None:
    """controller_test.go:455-582 — the whole expected Knative Service spec."""
    g = graph("singlenode1", annotations={"serving.kserve.io/deploymentMode": "Knative"})
    out = ksvc(g)
    assert out["apiVersion"] == "serving.knative.dev/v1" and out["kind"] == "Service"
    assert out["metadata"] == {"name": "singlenode1", "namespace": "default"}
    assert out["spec"] == {
        "template": {
            "metadata": {
                "labels": {
                    "serving.kserve.io/inferencegraph": "singlenode1",
                    "serving.kserve.io/kind": "InferenceGraph",
                },
                "annotations": {
                    "autoscaling.knative.dev/min-scale": "1",
                    "autoscaling.knative.dev/class": "kpa.autoscaling.knative.dev",
                    "serving.kserve.io/deploymentMode": "Knative",
                },
            },
            "spec": {
                "containers": [
                    {
                        "image": "kserve/router:v0.10.0",
                        "env": [{"name": "PROPAGATE_HEADERS", "value": "Authorization,Intuit_tid"}],
                        "args": ["--graph-json", BASIC_JSON],
                        "resources": DEFAULT_RESOURCES,
                        "readinessProbe": PROBE,
                        "securityContext": SECURITY,
                    }
                ],
                "automountServiceAccountToken": False,
            },
        }
    }
    assert "traffic" not in out["spec"]
    assert "name" not in out["spec"]["template"]["spec"]["containers"][0]


def test_knative_singlenode2_spec_resources_win() -> None:
    """controller_test.go:584-720 — spec.resources replace the router defaults and appear in the graph JSON."""
    res = {"limits": {"cpu": "123m", "memory": "123Mi"}, "requests": {"cpu": "123m", "memory": "123Mi"}}
    out = ksvc(graph("singlenode2", annotations={"serving.kserve.io/deploymentMode": "Knative"}, resources=res))
    container = out["spec"]["template"]["spec"]["containers"][0]
    assert container["resources"] == res
    assert container["args"][1] == (
        '{"nodes":{"root":{"routerType":"Sequence","steps":[{"serviceUrl":"http://someservice.example.com"}]}},'
        '"resources":{"limits":{"cpu":"123m","memory":"123Mi"},"requests":{"cpu":"123m","memory":"123Mi"}}}'
    )


def test_knative_singlenode3_pod_affinity() -> None:
    """controller_test.go:722-895 — affinity in the pod spec and, in Go field order, in the graph JSON."""
    affinity = {
        "podAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {
                    # written in an order different from Go's on purpose
                    "podAffinityTerm": {
                        "topologyKey": "topology.kubernetes.io/zone",
                        "labelSelector": {
                            "matchExpressions": [
                                {"values": ["singlenode3"], "operator": "In", "key": "serving.kserve.io/inferencegraph"}
                            ]
                        },
                    },
                    "weight": 100,
                }
            ]
        }
    }
    out = ksvc(graph("singlenode3", annotations={"serving.kserve.io/deploymentMode": "Knative"}, affinity=affinity))
    pod = out["spec"]["template"]["spec"]
    assert pod["affinity"] == affinity
    assert pod["containers"][0]["args"][1] == (
        '{"nodes":{"root":{"routerType":"Sequence","steps":[{"serviceUrl":"http://someservice.example.com"}]}},'
        '"resources":{},"affinity":{"podAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":[{"weight":100,'
        '"podAffinityTerm":{"labelSelector":{"matchExpressions":[{"key":"serving.kserve.io/inferencegraph",'
        '"operator":"In","values":["singlenode3"]}]},"topologyKey":"topology.kubernetes.io/zone"}}]}}}'
    )


def test_knative_singlenode4_tolerations() -> None:
    """controller_test.go:1475-1619."""
    out = ksvc(
        graph("singlenode4", annotations={"serving.kserve.io/deploymentMode": "Knative"}, tolerations=[TOLERATION])
    )
    pod = out["spec"]["template"]["spec"]
    assert pod["tolerations"] == [TOLERATION]
    assert pod["containers"][0]["args"][1] == (
        '{"nodes":{"root":{"routerType":"Sequence","steps":[{"serviceUrl":"http://someservice.example.com"}]}},'
        '"resources":{},"tolerations":[{"key":"key1","operator":"Equal","value":"value1","effect":"NoSchedule"}]}'
    )


@pytest.mark.parametrize(
    ("value", "allow_zero", "kept"),
    [
        ("0", False, False),  # controller_test.go:90-144 (initialscale1)
        ("3", False, True),  # :146-200 (initialscale2)
        ("non-integer", False, False),  # :202-257 (initialscale3)
        ("0", True, True),  # :288-341 (initialscale4)
        ("3", True, True),  # :343-396 (initialscale5)
        ("non-integer", True, False),  # :398-452 (initialscale6)
    ],
)
def test_knative_initial_scale(value: str, allow_zero: bool, kept: bool) -> None:
    key = "autoscaling.knative.dev/initial-scale"
    g = graph("initialscale", annotations={"serving.kserve.io/deploymentMode": "Knative", key: value}, minReplicas=2)
    annotations = ksvc(g, allow_zero_initial_scale=allow_zero)["spec"]["template"]["metadata"]["annotations"]
    assert annotations.get(key) == (value if kept else None)
    assert annotations["autoscaling.knative.dev/min-scale"] == "2"


def test_knative_labels_scaling_timeout_and_passthrough() -> None:
    """knative_reconciler.go createKnativeService: metadata labels as-is, template labels minus visibility,
    autoscaling annotations from the spec, passthrough moved up, timeoutSeconds from spec.timeout."""
    labels = {"team": "a", "networking.knative.dev/visibility": "cluster-local"}
    annotations = {
        "serving.knative.openshift.io/enablePassthrough": "true",
        "autoscaling.knative.dev/class": "hpa.autoscaling.knative.dev",
    }
    g = graph(
        "ig",
        labels=labels,
        annotations=annotations,
        minReplicas=0,
        maxReplicas=4,
        scaleTarget=7,
        scaleMetric="rps",
        timeout=30,
    )
    out = ksvc(g, config())
    assert out["metadata"] == {
        "name": "ig",
        "namespace": "default",
        "labels": labels,
        "annotations": {"serving.knative.openshift.io/enablePassthrough": "true"},
    }
    template = out["spec"]["template"]
    assert template["metadata"]["labels"] == {
        "team": "a",
        "serving.kserve.io/inferencegraph": "ig",
        "serving.kserve.io/kind": "InferenceGraph",
    }
    assert template["metadata"]["annotations"] == {
        "autoscaling.knative.dev/class": "hpa.autoscaling.knative.dev",
        "autoscaling.knative.dev/target": "7",
        "autoscaling.knative.dev/metric": "rps",
        "autoscaling.knative.dev/min-scale": "0",
        "autoscaling.knative.dev/max-scale": "4",
    }
    assert template["spec"]["timeoutSeconds"] == 30
    assert "env" not in template["spec"]["containers"][0]  # no headers in the router config


# --- Standard (raw_ig_test.go, controller_test.go:897-994) ---------------------------------------------------------


@pytest.mark.parametrize(
    ("case", "router", "spec", "env", "resources", "args1"),
    [
        ("Basic Inference graph", ROUTER, {}, None, DEFAULT_RESOURCES, BASIC_JSON),
        (
            "Inference graph with resource requirements",
            ROUTER,
            {"resources": DEFAULT_RESOURCES},
            None,
            DEFAULT_RESOURCES,
            '{"nodes":{"root":{"routerType":"Sequence","steps":[{"serviceUrl":"http://someservice.example.com"}]}},'
            '"resources":{"limits":{"cpu":"100m","memory":"500Mi"},"requests":{"cpu":"100m","memory":"100Mi"}}}',
        ),
        (
            "Inference graph with propagate headers",
            {**ROUTER, "headers": HEADERS},
            {},
            [{"name": "PROPAGATE_HEADERS", "value": "Authorization,Intuit_tid"}],
            DEFAULT_RESOURCES,
            BASIC_JSON,
        ),
        (
            "Inference graph with tolerations",
            ROUTER,
            {"resources": DEFAULT_RESOURCES, "tolerations": [TOLERATION]},
            None,
            DEFAULT_RESOURCES,
            '{"nodes":{"root":{"routerType":"Sequence","steps":[{"serviceUrl":"http://someservice.example.com"}]}},'
            '"resources":{"limits":{"cpu":"100m","memory":"500Mi"},"requests":{"cpu":"100m","memory":"100Mi"}},'
            '"tolerations":[{"key":"key1","operator":"Equal","value":"value1","effect":"NoSchedule"}]}',
        ),
    ],
)
def test_standard_pod_spec(case: str, router: dict, spec: dict, env: list | None, resources: dict, args1: str) -> None:
    """raw_ig_test.go:40-343 (TestCreateInferenceGraphPodSpec), plus the raw pod defaults KServe's Deployment
    reconciler adds (setDefaultPodSpec)."""
    objects = by_kind(render_graph(graph("basic-ig", "basic-ig-namespace", **spec), config(router), "Standard", {}))
    pod = objects["Deployment"]["spec"]["template"]["spec"]
    container = pod["containers"][0]
    expected = {
        "name": "basic-ig",
        "image": "kserve/router:v0.10.0",
        "args": ["--graph-json", args1],
        "resources": resources,
        "readinessProbe": PROBE,
        "securityContext": SECURITY,
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File",
        "imagePullPolicy": "IfNotPresent",
    }
    if env is not None:
        expected["env"] = env
    assert container == expected, case
    assert pod["automountServiceAccountToken"] is False
    assert "imagePullSecrets" not in pod  # KServe's empty list is omitted on the wire
    assert pod.get("tolerations") == spec.get("tolerations")


def test_standard_igraw1_objects() -> None:
    """controller_test.go:897-994: a Deployment and a Service named after the graph, no Knative Service; plus the
    raw reconciler's Service port and HPA."""
    g = graph("igraw1", annotations={"serving.kserve.io/deploymentMode": "Standard"})
    objects = render_graph(g, config(), "Standard", {})
    assert [(o["apiVersion"], o["kind"]) for o in objects] == [
        ("v1", "Service"),
        ("apps/v1", "Deployment"),
        ("autoscaling/v2", "HorizontalPodAutoscaler"),
    ]
    kinds = by_kind(objects)
    assert all(o["metadata"]["name"] == "igraw1" for o in objects)
    dep = kinds["Deployment"]
    assert dep["spec"]["template"]["spec"]["containers"][0]["image"] == "kserve/router:v0.10.0"
    assert dep["spec"]["selector"] == {"matchLabels": {"app": "isvc.igraw1"}}
    assert "replicas" not in dep["spec"]
    assert kinds["Service"]["spec"]["ports"] == [{"name": "igraw1", "port": 80, "targetPort": 8080, "protocol": "TCP"}]
    assert kinds["HorizontalPodAutoscaler"]["spec"]["minReplicas"] == 1


@pytest.mark.parametrize(
    ("labels", "annotations", "scaling", "expected_labels"),
    [
        # raw_ig_test.go:364-390 "Basic Inference graph"
        ({}, {}, {}, {"serving.kserve.io/inferencegraph": "basic-ig"}),
        # :391-425 "Inference graph with annotations , min and max replicas"
        ({}, {"test": "test"}, {"minReplicas": 2, "maxReplicas": 5}, {"serving.kserve.io/inferencegraph": "basic-ig"}),
        # :426-452 "Inference graph with labels"
        ({"test": "test"}, {}, {}, {"serving.kserve.io/inferencegraph": "basic-ig", "test": "test"}),
        # :453-495 "Inference graph with annotations and labels"
        (
            {"test": "test"},
            {"test": "test"},
            {"minReplicas": 5, "maxReplicas": 10, "scaleTarget": 50, "scaleMetric": "cpu"},
            {"serving.kserve.io/inferencegraph": "basic-ig", "test": "test"},
        ),
    ],
)
def test_standard_object_meta_and_scaling(
    labels: dict, annotations: dict, scaling: dict, expected_labels: dict
) -> None:
    """raw_ig_test.go:345-509 (TestConstructGraphObjectMeta): graph labels + the graph label, graph annotations,
    and min/max/scaleTarget/scaleMetric reaching the HPA."""
    g = graph("basic-ig", "basic-ig-namespace", labels=labels, annotations=annotations, **scaling)
    kinds = by_kind(render_graph(g, config(), "Standard", {}))
    with_app = {**expected_labels, "app": "isvc.basic-ig"}
    for kind in ("Deployment", "Service", "HorizontalPodAutoscaler"):
        assert kinds[kind]["metadata"]["labels"] == with_app, kind
        assert kinds[kind]["metadata"].get("annotations", {}) == annotations, kind
    hpa = kinds["HorizontalPodAutoscaler"]["spec"]
    assert hpa["minReplicas"] == scaling.get("minReplicas", 1)
    assert hpa["maxReplicas"] == max(scaling.get("maxReplicas", 0), hpa["minReplicas"])
    assert hpa["metrics"] == [
        {
            "type": "Resource",
            "resource": {
                "name": "cpu",
                "target": {"type": "Utilization", "averageUtilization": scaling.get("scaleTarget", 80)},
            },
        }
    ]


@pytest.mark.parametrize(
    ("cls", "kinds"), [("keda", ["Service", "Deployment", "ScaledObject"]), ("none", ["Service", "Deployment"])]
)
def test_standard_autoscaler_class(cls: str, kinds: list[str]) -> None:
    g = graph("ig", annotations={"serving.kserve.io/autoscalerClass": cls}, minReplicas=3)
    objects = render_graph(g, config(), "Standard", {})
    assert [o["kind"] for o in objects] == kinds
    if cls == "none":
        assert objects[1]["spec"]["replicas"] == 3


def test_router_config_image_pull_secrets_policy_and_pod_fields() -> None:
    """raw_ig.go createInferenceGraphPodSpec: router imagePullSecrets/imagePullPolicy, and the spec's node
    placement and service account."""
    router = {**ROUTER, "imagePullPolicy": "Always", "imagePullSecrets": ["regcred", "other"]}
    g = graph("ig", nodeSelector={"zone": "b", "arch": "x86"}, nodeName="n1", serviceAccountName="sa")
    for mode in ("Standard", "Knative"):
        objects = render_graph(g, config(router), mode, {})
        workload = next(o for o in objects if o["kind"] in ("Deployment", "Service") and "template" in o["spec"])
        pod = workload["spec"]["template"]["spec"]
        assert pod["imagePullSecrets"] == [{"name": "regcred"}, {"name": "other"}], mode
        assert pod["containers"][0]["imagePullPolicy"] == "Always", mode
        assert (pod["nodeSelector"], pod["nodeName"], pod["serviceAccountName"]) == (
            {"zone": "b", "arch": "x86"},
            "n1",
            "sa",
        )
        # Go sorts map keys in the graph JSON
        assert pod["containers"][0]["args"][1].endswith(
            ',"nodeSelector":{"arch":"x86","zone":"b"},"nodeName":"n1","serviceAccountName":"sa"}'
        )


@pytest.mark.parametrize("mode", ["Standard", "Knative"])
@pytest.mark.parametrize("value", ["true", "TRUE"])
def test_stopped_graph_renders_nothing(mode: str, value: str) -> None:
    """controller_test.go:1065-1473: with serving.kserve.io/stop true no workload exists (isvcs are not resolved)."""
    g = graph(
        "ig",
        annotations={"serving.kserve.io/stop": value},
        nodes={"root": {"routerType": "Sequence", "steps": [{"serviceName": "gone"}]}},
    )
    assert render_graph(g, config(), mode, {}) == []


def test_stop_false_renders() -> None:
    g = graph("ig", annotations={"serving.kserve.io/stop": "false"})
    assert [o["kind"] for o in render_graph(g, config(), "Knative", {})] == ["Service"]


def test_bad_router_quantity_is_reported() -> None:
    """controller.go getRouterConfigs: every default must parse, even when the spec sets resources."""
    with pytest.raises(InputError) as err:
        render_graph(graph("ig", resources=DEFAULT_RESOURCES), config({**ROUTER, "cpuLimit": "lots"}), "Standard", {})
    assert err.value.message.startswith('Failed to parse resource configuration for router: "quantities must match')
    assert err.value.path == "data.router.cpuLimit"


def test_graph_status_url() -> None:
    """raw_kube_reconciler.go createRawURL: http + the domain template for the graph name."""
    assert graph_status_url(graph("ig", "ns"), config()) == "http://ig-ns.example.com"
    cfg = config(
        ingress={
            "ingressGateway": "knative-serving/knative-ingress-gateway",
            "ingressDomain": "corp.io",
            "domainTemplate": "{{ .Name }}.{{ .Labels.team }}.{{ .IngressDomain }}",
        }
    )
    assert graph_status_url(graph("ig", "ns", labels={"team": "red"}), cfg) == "http://ig.red.corp.io"


# --- serviceName resolution (controller.go:133-160) ------------------------------------------------------------


FOUR_KINDS = {
    "root": {
        "routerType": "Sequence",
        "steps": [
            {"name": "pre", "serviceName": "pre", "data": "$request"},
            {"name": "next", "nodeName": "splitter", "dependency": "Hard"},
        ],
    },
    "splitter": {
        "routerType": "Splitter",
        "steps": [
            {"serviceName": "blue", "weight": 80},
            {"serviceName": "green", "weight": 20},
        ],
    },
    "ensemble": {
        "routerType": "Ensemble",
        "steps": [
            {"name": "a", "serviceName": "blue"},
            {"name": "b", "serviceUrl": "http://x.example.com/v1/models/x:predict"},
        ],
    },
    "switch": {
        "routerType": "Switch",
        "steps": [
            {"serviceName": "pre", "condition": "instances.#(intval>10)", "mapPredictionsToInstances": True},
            {"nodeName": "ensemble", "condition": "instances.#(intval<11)"},
        ],
    },
}
TARGETS = {
    ("prod", "pre"): IsvcTarget("http://pre.prod.svc.cluster.local", "v1", "pre"),
    ("prod", "blue"): IsvcTarget("http://blue.prod.svc.cluster.local", "v2", "iris"),
    ("prod", "green"): IsvcTarget("http://green.prod.svc.cluster.local", None, "green"),
    ("other", "blue"): IsvcTarget("http://wrong", "v1", "wrong"),
}


def test_sequence_splitter_ensemble_switch_graph_json() -> None:
    """All four router types; serviceUrl filled per protocol (PredictPath), nodes sorted, steps in Go field order."""
    (out,) = render_graph(graph("four", "prod", nodes=FOUR_KINDS), config(), "Knative", TARGETS)
    text = out["spec"]["template"]["spec"]["containers"][0]["args"][1]
    assert text == (
        '{"nodes":{'
        '"ensemble":{"routerType":"Ensemble","steps":[{"name":"a","serviceName":"blue",'
        '"serviceUrl":"http://blue.prod.svc.cluster.local/v2/models/iris/infer"},'
        '{"name":"b","serviceUrl":"http://x.example.com/v1/models/x:predict"}]},'
        '"root":{"routerType":"Sequence","steps":[{"name":"pre","serviceName":"pre",'
        '"serviceUrl":"http://pre.prod.svc.cluster.local/v1/models/pre:predict","data":"$request"},'
        '{"name":"next","nodeName":"splitter","dependency":"Hard"}]},'
        '"splitter":{"routerType":"Splitter","steps":[{"serviceName":"blue",'
        '"serviceUrl":"http://blue.prod.svc.cluster.local/v2/models/iris/infer","weight":80},'
        '{"serviceName":"green","serviceUrl":"http://green.prod.svc.cluster.local","weight":20}]},'
        '"switch":{"routerType":"Switch","steps":[{"serviceName":"pre",'
        '"serviceUrl":"http://pre.prod.svc.cluster.local/v1/models/pre:predict",'
        '"mapPredictionsToInstances":true,"condition":"instances.#(intval\\u003e10)"},'
        '{"nodeName":"ensemble","condition":"instances.#(intval\\u003c11)"}]}},'
        '"resources":{}}'
    )
    assert json.loads(text)["nodes"]["switch"]["steps"][1]["condition"] == "instances.#(intval<11)"


def test_unknown_isvc_names_the_step() -> None:
    g = graph(
        "ig", "prod", nodes={"root": {"routerType": "Sequence", "steps": [{"name": "s", "serviceName": "missing"}]}}
    )
    with pytest.raises(InputError) as err:
        render_graph(g, config(), "Standard", TARGETS)
    assert "Failed to find graph service missing" in err.value.message
    assert 'step 0 ("s") in node "root" of InferenceGraph "ig"' in err.value.message
    assert err.value.path == "spec.nodes.root.steps[0].serviceName"


def test_target_error_is_reported() -> None:
    targets = {
        ("prod", "x"): IsvcTarget(
            "http://x", None, "x", "the runtime does not support a protocol compatible with Inference Graphs"
        )
    }
    g = graph("ig", "prod", nodes={"root": {"routerType": "Sequence", "steps": [{"serviceName": "x"}]}})
    with pytest.raises(InputError, match="service x is not ready: the runtime does not support a protocol compatible"):
        render_graph(g, config(), "Knative", targets)


def test_full_spec_field_order() -> None:
    """json.Marshal of every InferenceGraphSpec field, in the struct's declaration order."""
    g = graph(
        "ig",
        resources={"requests": {"memory": "1Gi", "cpu": "0.5"}, "limits": {"cpu": 2}},
        affinity={
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [{"matchExpressions": [{"key": "gpu", "operator": "Exists"}]}]
                }
            }
        },
        timeout=15,
        routerTimeouts={"serviceClient": 4, "serverRead": 1},
        minReplicas=0,
        maxReplicas=3,
        scaleTarget=9,
        scaleMetric="concurrency",
        tolerations=[{"operator": "Exists", "tolerationSeconds": 0}],
        nodeSelector={"b": "2", "a": "1"},
        nodeName="node",
        serviceAccountName="sa",
    )
    assert graph_json(g.spec) == (
        '{"nodes":{"root":{"routerType":"Sequence","steps":[{"serviceUrl":"http://someservice.example.com"}]}},'
        '"resources":{"limits":{"cpu":"2"},"requests":{"cpu":"500m","memory":"1Gi"}},'
        '"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":'
        '[{"matchExpressions":[{"key":"gpu","operator":"Exists"}]}]}}},'
        '"timeout":15,"routerTimeouts":{"serverRead":1,"serviceClient":4},"minReplicas":0,"maxReplicas":3,'
        '"scaleTarget":9,"scaleMetric":"concurrency","tolerations":[{"operator":"Exists","tolerationSeconds":0}],'
        '"nodeSelector":{"a":"1","b":"2"},"nodeName":"node","serviceAccountName":"sa"}'
    )


def test_router_type_is_written_even_without_steps() -> None:
    assert graph_json(graph("ig", nodes={"root": {"routerType": "Ensemble", "steps": []}}).spec) == (
        '{"nodes":{"root":{"routerType":"Ensemble"}},"resources":{}}'
    )


def test_unknown_field_in_affinity_is_located() -> None:
    g = graph("ig", affinity={"podAffinity": {"preferred": []}})
    with pytest.raises(InputError) as err:
        render_graph(g, config(), "Standard", {})
    assert err.value.message == 'unknown field "preferred"'
    assert err.value.path == "spec.affinity.podAffinity.preferred"


def test_unsupported_mode() -> None:
    with pytest.raises(InputError, match="ModelMesh is not supported"):
        render_graph(graph("ig"), config(), "ModelMesh", {})
