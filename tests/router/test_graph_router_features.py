"""The router's features as rendered: retries in ``--graph-json`` (spec fields or annotation), metrics (env, port,
Prometheus annotations) and the in-flight limit, and the errors a bad configuration gets."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kserve_compile.errors import InputError
from kserve_compile.graph.graph_types import InferenceGraph
from kserve_compile.graph.render import graph_json, render_graph
from kserve_compile.graph.router_options import ANN_ROUTER_MAX_INFLIGHT, ANN_ROUTER_RETRY
from kserve_compile.inputs.config import KServeConfig, parse_config

STEPS = [
    {"name": "first", "serviceUrl": "http://first.example.com/v1/models/first:predict"},
    {"serviceUrl": "http://second.example.com/v1/models/second:predict"},
    {"name": "inner", "nodeName": "inner"},
]
NODES = {
    "root": {"routerType": "Sequence", "steps": STEPS},
    "inner": {"routerType": "Sequence", "steps": [{"serviceUrl": "http://third.example.com"}]},
}
SCRAPE = "serving.kserve.io/enable-prometheus-scraping"


def graph(
    annotations: dict[str, str] | None = None, nodes: dict[str, Any] | None = None, **spec: Any
) -> InferenceGraph:
    return InferenceGraph.model_validate(
        {
            "apiVersion": "serving.kserve.io/v1alpha1",
            "kind": "InferenceGraph",
            "metadata": {"name": "g", "namespace": "default", "annotations": annotations or {}},
            "spec": {"nodes": NODES if nodes is None else nodes, **spec},
        }
    )


def config(scraping: str = "false") -> KServeConfig:
    data = {
        "router": json.dumps(
            {"image": "r:1", "cpuRequest": "1", "cpuLimit": "1", "memoryRequest": "1Gi", "memoryLimit": "1Gi"}
        ),
        "metricsAggregator": json.dumps({"enableMetricAggregation": "false", "enablePrometheusScraping": scraping}),
    }
    return parse_config(data)


def rendered(g: InferenceGraph, mode: str = "Standard", cfg: KServeConfig | None = None) -> dict[str, Any]:
    objects = render_graph(g, cfg or config(), mode, {})
    return next(o for o in objects if o["kind"] in ("Deployment", "Service") and "template" in o["spec"])


def pod(obj: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    template = obj["spec"]["template"]
    return template["metadata"], template["spec"]["containers"][0]


def router_json(obj: dict[str, Any]) -> dict[str, Any]:
    args = pod(obj)[1]["args"]
    return json.loads(args[args.index("--graph-json") + 1])


def test_without_the_features_nothing_changes() -> None:
    meta, container = pod(rendered(graph()))
    assert "env" not in container and "ports" not in container
    assert not any(k.startswith("prometheus.io/") for k in meta.get("annotations", {}))
    assert "defaultRetry" not in router_json(rendered(graph()))


def test_spec_retries_reach_the_router_with_the_prs_defaults_filled() -> None:
    steps = [{**STEPS[0], "retry": {"maxRetries": 5}}, STEPS[1], STEPS[2]]
    g = graph(nodes={**NODES, "root": {"routerType": "Sequence", "steps": steps}}, defaultRetry={"initialDelayMs": 50})
    spec = router_json(rendered(g))
    assert spec["defaultRetry"] == {"maxRetries": 3, "initialDelayMs": 50, "maxDelayMs": 300000}
    root = spec["nodes"]["root"]["steps"]
    assert root[0]["retry"] == {"maxRetries": 5, "initialDelayMs": 100, "maxDelayMs": 300000}
    assert "retry" not in root[1]  # the router applies defaultRetry to it
    assert list(root[0]) == ["name", "serviceUrl", "retry"]  # after InferenceStep's fields, as Go marshals


def test_the_annotation_says_the_same_and_the_spec_wins_where_both_do() -> None:
    value = {"defaultRetry": {"maxRetries": 1}, "steps": {"root": {"first": {"maxRetries": 2}, "1": {"maxRetries": 4}}}}
    steps = [{**STEPS[0], "retry": {"maxRetries": 9}}, STEPS[1], STEPS[2]]
    g = graph(
        {ANN_ROUTER_RETRY: json.dumps(value)},
        nodes={**NODES, "root": {"routerType": "Sequence", "steps": steps}},
    )
    spec = router_json(rendered(g))
    assert spec["defaultRetry"]["maxRetries"] == 1
    root = spec["nodes"]["root"]["steps"]
    assert root[0]["retry"]["maxRetries"] == 9  # the spec's
    assert root[1]["retry"]["maxRetries"] == 4  # the unnamed step, by index
    assert json.loads(graph_json(g.spec)).get("defaultRetry") is None  # the spec alone has none


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("{", f"{ANN_ROUTER_RETRY} is not JSON"),
        ("[]", "the value must be a JSON object, not []"),
        ('{"retries": {}}', 'unknown field "retries" (known: defaultRetry, steps)'),
        ('{"steps": {"nope": {}}}', 'steps names node "nope", which the graph does not define (defined: inner, root)'),
        ('{"steps": {"root": {"third": {}}}}', 'node "root" has no step "third" (its steps: first, 1, inner'),
        ('{"steps": {"root": {"inner": {}}}}', 'the step\'s target is node "inner": retries are of calls to a service'),
        ('{"defaultRetry": {"maxRetries": 11}}', "defaultRetry.maxRetries in body should be less than or equal to 10"),
        ('{"defaultRetry": {"tries": 1}}', 'defaultRetry: unknown field "tries"'),
        ('{"defaultRetry": {"maxRetries": "2"}}', 'defaultRetry.maxRetries: must be an integer, not "2"'),
    ],
)
def test_a_bad_retry_annotation_is_an_error_naming_it(value: str, message: str) -> None:
    with pytest.raises(InputError) as err:
        rendered(graph({ANN_ROUTER_RETRY: value}))
    assert message in err.value.message and err.value.path == f"metadata.annotations[{ANN_ROUTER_RETRY}]"


@pytest.mark.parametrize(
    ("spec", "path", "message"),
    [
        ({"defaultRetry": {"maxRetries": 11}}, "spec.defaultRetry.maxRetries", "should be less than or equal to 10"),
        ({"defaultRetry": {"maxDelayMs": -1}}, "spec.defaultRetry.maxDelayMs", "should be greater than or equal to 0"),
        (
            {"nodes": {**NODES, "root": {"routerType": "Sequence", "steps": [{**STEPS[2], "retry": {}}]}}},
            "spec.nodes.root.steps[0].retry",
            'its target is node "inner": retries are of calls to a service',
        ),
    ],
)
def test_bad_spec_retries_are_errors_naming_the_field(spec: dict[str, Any], path: str, message: str) -> None:
    with pytest.raises(InputError) as err:
        rendered(graph(**spec))
    assert err.value.path == path and message in err.value.message


def test_metrics_on_standard_mode_env_port_and_scrape_annotations() -> None:
    meta, container = pod(rendered(graph({SCRAPE: "true", ANN_ROUTER_MAX_INFLIGHT: "32"})))
    assert container["env"] == [
        {"name": "ROUTER_METRICS_PORT", "value": "9095"},
        {"name": "ROUTER_MAX_INFLIGHT", "value": "32"},
    ]
    assert container["ports"] == [
        {"containerPort": 8080, "name": "http", "protocol": "TCP"},
        {"containerPort": 9095, "name": "http-metrics", "protocol": "TCP"},
    ]
    annotations = meta["annotations"]
    assert (annotations["prometheus.io/scrape"], annotations["prometheus.io/port"]) == ("true", "9095")
    assert annotations["prometheus.io/path"] == "/metrics"


def test_metrics_on_knative_mode_declare_no_second_port() -> None:
    meta, container = pod(rendered(graph({SCRAPE: "true"}), "Knative"))
    assert container["env"] == [{"name": "ROUTER_METRICS_PORT", "value": "9095"}] and "ports" not in container
    assert meta["annotations"]["prometheus.io/port"] == "9095"


@pytest.mark.parametrize(
    ("annotation", "default", "on"),
    [(None, "true", False), ("false", "true", False), ("true", "false", True), (None, "false", False)],
)
def test_only_the_graphs_own_annotation_turns_metrics_on(annotation: str | None, default: str, on: bool) -> None:
    """inferenceservice-config's enablePrometheusScraping is KServe's setting for isvc pods: with it alone the
    router is rendered as KServe renders it (the project's features stay opt-in per graph)."""
    g = graph({SCRAPE: annotation} if annotation else {})
    meta, container = pod(rendered(g, cfg=config(default)))
    assert ("ports" in container) == on
    assert any(k.startswith("prometheus.io/") for k in meta.get("annotations", {})) == on


@pytest.mark.parametrize("value", ["0", "-3", "ten", "1.5", ""])
def test_a_bad_in_flight_limit_is_an_error_naming_it(value: str) -> None:
    with pytest.raises(InputError) as err:
        rendered(graph({ANN_ROUTER_MAX_INFLIGHT: value}))
    assert err.value.path == f"metadata.annotations[{ANN_ROUTER_MAX_INFLIGHT}]" and "1 or more" in err.value.message


def test_the_schema_takes_the_retry_fields_within_the_prs_bounds() -> None:
    from kserve_compile.checks.schema import check_object

    def issues(retry: dict[str, Any]) -> list[str]:
        obj = {
            "apiVersion": "serving.kserve.io/v1alpha1",
            "kind": "InferenceGraph",
            "metadata": {"name": "g"},
            "spec": {"defaultRetry": retry, "nodes": {"root": {"routerType": "Sequence", "steps": [{"retry": retry}]}}},
        }
        return [i.path for i in check_object(obj)]

    assert issues({"maxRetries": 3, "initialDelayMs": 100, "maxDelayMs": 300000}) == []
    assert sorted(issues({"maxRetries": 11})) == [
        "spec.defaultRetry.maxRetries",
        "spec.nodes.root.steps[0].retry.maxRetries",
    ]
    assert issues({"tries": 1}) != []


def test_with_metrics_the_service_still_sends_port_80_to_the_graph_and_serves_metrics_too() -> None:
    objects = render_graph(graph({SCRAPE: "true"}), config(), "Standard", {})
    service = next(o for o in objects if o["kind"] == "Service")
    assert service["spec"]["ports"] == [
        {"name": "http", "port": 80, "protocol": "TCP", "targetPort": 8080},
        {"name": "http-metrics", "port": 9095, "protocol": "TCP", "targetPort": 9095},
    ]
    plain = next(o for o in render_graph(graph(), config(), "Standard", {}) if o["kind"] == "Service")
    assert plain["spec"]["ports"] == [{"name": "g", "port": 80, "protocol": "TCP", "targetPort": 8080}]
