"""InferenceGraph admission rules, one case per scenario of KServe's
``pkg/apis/serving/v1alpha1/inference_graph_validation_test.go`` (TestInferenceGraph_ValidateCreate, lines 44-285),
plus the unknown-``nodeName`` check and the CRD's enums and required fields."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from kserve_compile.errors import InputError
from kserve_compile.graph.graph_types import InferenceGraph
from kserve_compile.graph.validation import validate_graph

NAME_REGEX = "[a-z]([-a-z0-9]*[a-z0-9])?"


def name_error(name: str) -> str:
    return (
        f'The InferenceGraph "{name}" is invalid: a InferenceGraph name must consist of lower case alphanumeric '
        'characters or \'-\', and must start with alphabetical character. (e.g. "my-name" or "abc-123", regex used '
        f"for validation is '{NAME_REGEX}')"
    )


def graph(nodes: dict | None, name: str = "foo-bar") -> InferenceGraph:
    return InferenceGraph.model_validate(
        {
            "apiVersion": "serving.kserve.io/v1alpha1",
            "kind": "InferenceGraph",
            "metadata": {"name": name},
            "spec": {"nodes": nodes},
        }
    )


ROOT = {"root": {"routerType": "Sequence"}}


def splitter(*steps: dict[str, Any]) -> dict:
    return {"root": {"routerType": "Splitter", "steps": list(steps)}}


@pytest.mark.parametrize(
    ("case", "name", "nodes", "message", "path"),
    [
        ("simple", "foo-bar", ROOT, None, None),
        ("alphanumeric model name", "Abc-123", None, name_error("Abc-123"), "metadata.name"),
        ("name starts with number", "4abc-3", ROOT, name_error("4abc-3"), "metadata.name"),
        ("name starts with dash", "-abc-3", ROOT, name_error("-abc-3"), "metadata.name"),
        ("name ends with dash", "abc-3-", ROOT, name_error("abc-3-"), "metadata.name"),
        ("name includes dot", "abc.123", ROOT, name_error("abc.123"), "metadata.name"),
        ("name includes spaces", "abc 123", ROOT, name_error("abc 123"), "metadata.name"),
        (
            "without root node",
            "foo-bar",
            {},
            "root node not found, InferenceGraph needs a node with name 'root' as the root node of the graph",
            "spec.nodes",
        ),
        ("with root node", "foo-bar", ROOT, None, None),
        (
            "invalid weight for splitter",
            "foo-bar",
            {
                "root": {
                    "routerType": "Splitter",
                    "steps": [
                        {"weight": 80, "nodeName": "test"},
                        {"weight": 30, "serviceUrl": "http://foo-bar.local/"},
                    ],
                }
            },
            "InferenceGraph[foo-bar] Node[root] splitter node: the sum of traffic weights for all routing targets should be 100",
            "spec.nodes.root.steps",
        ),
        (
            "weight missing in splitter",
            "foo-bar",
            splitter({"serviceName": "test"}),
            "InferenceGraph[foo-bar] Node[root] Route[test] missing the 'Weight'",
            "spec.nodes.root.steps[0].weight",
        ),
        (
            "simple splitter",
            "foo-bar",
            splitter({"weight": 80, "serviceName": "service1"}, {"weight": 20, "serviceName": "service2"}),
            None,
            None,
        ),
        (
            "step inference target not provided",
            "foo-bar",
            splitter({"weight": 100}),
            'Step 0 ("") in node "root" of InferenceGraph "foo-bar" does not specify an inference target',
            "spec.nodes.root.steps[0]",
        ),
        (
            "invalid inference graph target",
            "foo-bar",
            splitter({"weight": 100, "serviceName": "service", "nodeName": "test"}),
            'Step 0 ("") in node "root" of InferenceGraph "foo-bar" specifies more than one of nodeName, serviceName, serviceUrl',
            "spec.nodes.root.steps[0]",
        ),
        (
            "duplicate step name",
            "foo-bar",
            splitter(
                {"name": "step1", "weight": 80, "serviceName": "service1"},
                {"name": "step1", "weight": 20, "serviceName": "service2"},
            ),
            'Node "root" of InferenceGraph "foo-bar" contains more than one step with name "step1"',
            "spec.nodes.root.steps[1].name",
        ),
    ],
)
def test_kserve_validate_create(
    case: str, name: str, nodes: dict | None, message: str | None, path: str | None
) -> None:
    g = graph(nodes, name)
    if message is None:
        validate_graph(g)
        return
    with pytest.raises(InputError) as err:
        validate_graph(g)
    assert err.value.message == message, case
    assert err.value.path == path, case


def test_check_order_follows_kserve() -> None:
    """Name before root; duplicate names before targets; targets before weights."""
    with pytest.raises(InputError, match="is invalid: a InferenceGraph name"):
        validate_graph(graph({}, "Bad"))
    both = splitter({"name": "a", "weight": 1, "serviceName": "x"}, {"name": "a"})
    with pytest.raises(InputError, match="more than one step with name"):
        validate_graph(graph(both))
    with pytest.raises(InputError, match="does not specify an inference target"):
        validate_graph(graph(splitter({"weight": 1})))


def test_weight_error_names_service_even_for_node_target() -> None:
    """KServe prints the step's serviceName in Route[...], empty for a nodeName/serviceUrl step."""
    nodes = {
        "root": {"routerType": "Sequence", "steps": [{"nodeName": "split"}]},
        "split": {"routerType": "Splitter", "steps": [{"nodeName": "root"}]},
    }
    with pytest.raises(InputError) as err:
        validate_graph(graph(nodes))
    assert err.value.message == "InferenceGraph[foo-bar] Node[split] Route[] missing the 'Weight'"
    assert err.value.path == "spec.nodes.split.steps[0].weight"


def test_unknown_node_reference() -> None:
    nodes = {
        "root": {"routerType": "Sequence", "steps": [{"name": "go", "nodeName": "nowhere"}]},
        "other": {"routerType": "Ensemble", "steps": [{"serviceUrl": "http://a"}]},
    }
    with pytest.raises(InputError) as err:
        validate_graph(graph(nodes))
    assert err.value.message == (
        'Step 0 ("go") in node "root" of InferenceGraph "foo-bar" refers to node "nowhere", which the graph does not '
        "define (defined: other, root)"
    )
    assert err.value.path == "spec.nodes.root.steps[0].nodeName"


def test_null_nodes_has_no_root() -> None:
    with pytest.raises(InputError, match="root node not found"):
        validate_graph(graph(None))


@pytest.mark.parametrize(
    ("spec", "where"),
    [
        ({"nodes": {"root": {}}}, ("spec", "nodes", "root", "routerType")),  # CRD: routerType required
        ({"nodes": {"root": {"routerType": "Parallel"}}}, ("spec", "nodes", "root", "routerType")),  # CRD enum
        (
            {"nodes": {"root": {"routerType": "Sequence", "steps": [{"dependency": "Maybe"}]}}},
            ("spec", "nodes", "root", "steps", 0, "dependency"),
        ),
        ({"nodes": {}, "scaleMetric": "gpu"}, ("spec", "scaleMetric")),
        ({}, ("spec", "nodes")),  # CRD: nodes required
        ({"nodes": {}, "replicas": 2}, ("spec", "replicas")),  # unknown field
    ],
)
def test_schema_rules(spec: dict, where: tuple) -> None:
    with pytest.raises(ValidationError) as err:
        InferenceGraph.model_validate(
            {
                "apiVersion": "serving.kserve.io/v1alpha1",
                "kind": "InferenceGraph",
                "metadata": {"name": "g"},
                "spec": spec,
            }
        )
    assert err.value.errors()[0]["loc"] == where
