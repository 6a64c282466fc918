"""InferenceGraph admission rules (``pkg/apis/serving/v1alpha1/inference_graph_validation.go``), KServe's wording.

The checks run in KServe's order and the first failure is reported. KServe walks ``spec.nodes`` as a Go map (random
order); here nodes are taken in document order so the same input always reports the same node. Ours, run last: a
``nodeName`` must name a node of the graph (KServe only finds out when the router is called); ``defaultRetry`` and
a step's ``retry`` (kserve/kserve PR #5386) within the PR's CRD bounds, and no ``retry`` on a step whose target is
a node (retries are of calls to a service: set them on that node's steps).
"""

from __future__ import annotations

import re

from ..errors import InputError
from .graph_types import InferenceGraph
from .router_options import annotation_retries, check_retry

GRAPH_NAME_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?"
_GRAPH_NAME = re.compile("^" + GRAPH_NAME_FMT + "$")
ROOT_NODE = "root"


def validate_graph(graph: InferenceGraph) -> None:
    """Raise :class:`InputError` (message and field path) for the first rule ``graph`` breaks."""
    name = graph.metadata.name
    nodes = graph.spec.nodes or {}
    if not _GRAPH_NAME.match(name):
        raise InputError(
            f'The InferenceGraph "{name}" is invalid: a InferenceGraph name must consist of lower case alphanumeric '
            "characters or '-', and must start with alphabetical character. "
            f'(e.g. "my-name" or "abc-123", regex used for validation is \'{GRAPH_NAME_FMT}\')',
            "metadata.name",
        )
    if ROOT_NODE not in nodes:
        raise InputError(
            "root node not found, InferenceGraph needs a node with name 'root' as the root node of the graph",
            "spec.nodes",
        )
    for node_name, node in nodes.items():
        seen: set[str] = set()
        for i, step in enumerate(node.steps or []):
            if step.name and step.name in seen:
                raise InputError(
                    f'Node "{node_name}" of InferenceGraph "{name}" contains more than one step with name "{step.name}"',
                    f"spec.nodes.{node_name}.steps[{i}].name",
                )
            if step.name:
                seen.add(step.name)
    for node_name, node in nodes.items():
        for i, step in enumerate(node.steps or []):
            count = sum(1 for target in (step.node_name, step.service_name, step.service_url) if target)
            where = f'Step {i} ("{step.name}") in node "{node_name}" of InferenceGraph "{name}"'
            if count == 0:
                raise InputError(f"{where} does not specify an inference target", f"spec.nodes.{node_name}.steps[{i}]")
            if count != 1:
                raise InputError(
                    f"{where} specifies more than one of nodeName, serviceName, serviceUrl",
                    f"spec.nodes.{node_name}.steps[{i}]",
                )
    for node_name, node in nodes.items():
        if node.router_type != "Splitter":
            continue
        total = 0
        for i, step in enumerate(node.steps or []):
            if step.weight is None:
                # KServe names the step by its serviceName, whatever the target is
                raise InputError(
                    f"InferenceGraph[{name}] Node[{node_name}] Route[{step.service_name}] missing the 'Weight'",
                    f"spec.nodes.{node_name}.steps[{i}].weight",
                )
            total += step.weight
        if total != 100:
            raise InputError(
                f"InferenceGraph[{name}] Node[{node_name}] splitter node: the sum of traffic weights for all routing "
                "targets should be 100",
                f"spec.nodes.{node_name}.steps",
            )
    for node_name, node in nodes.items():
        for i, step in enumerate(node.steps or []):
            if step.node_name and step.node_name not in nodes:
                raise InputError(
                    f'Step {i} ("{step.name}") in node "{node_name}" of InferenceGraph "{name}" refers to node '
                    f'"{step.node_name}", which the graph does not define (defined: {", ".join(sorted(nodes))})',
                    f"spec.nodes.{node_name}.steps[{i}].nodeName",
                )
    _validate_retries(graph)


def _validate_retries(graph: InferenceGraph) -> None:
    name = graph.metadata.name
    if graph.spec.default_retry is not None:
        check_retry(graph.spec.default_retry, "spec.defaultRetry")
    for node_name, node in (graph.spec.nodes or {}).items():
        for i, step in enumerate(node.steps or []):
            if step.retry is None:
                continue
            path = f"spec.nodes.{node_name}.steps[{i}].retry"
            check_retry(step.retry, path)
            if step.node_name:
                raise InputError(
                    f'Step {i} ("{step.name}") in node "{node_name}" of InferenceGraph "{name}" has a retry but its '
                    f'target is node "{step.node_name}": retries are of calls to a service, set them on the steps of '
                    f'node "{step.node_name}" (or spec.defaultRetry)',
                    path,
                )
    annotation_retries(graph)  # the annotation's errors name it
