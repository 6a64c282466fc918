"""``kserve-compile graph show``: Mermaid text and SVG, deterministic, with types, weights, conditions, Hard/Soft."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import yaml

from kserve_compile.graph.graph_types import InferenceGraph
from kserve_compile.graph.show import to_mermaid, to_svg

ROOT = Path(__file__).resolve().parents[2]


def _graph(scenario: str) -> InferenceGraph:
    for doc in yaml.safe_load_all((ROOT / "golden" / scenario / "input.yaml").read_text()):
        if doc and doc.get("kind") == "InferenceGraph":
            return InferenceGraph.model_validate(doc)
    raise AssertionError(scenario)


def test_mermaid_of_the_switch_graph() -> None:
    assert (
        to_mermaid(_graph("graph-switch-knative"))
        == """\
%% InferenceGraph ml/switch-graph
flowchart LR
  n0{{"root (Switch)"}}
  n1["InferenceService sklearn-v1"]
  n2["InferenceService sklearn-v2"]
  n3{{"echo (Sequence)"}}
  n4["http://echo.ml.svc.cluster.local/v1/models/echo:predict"]
  n0 -.->|"legacy, if [@this].#35;(version==#quot;v1#quot;), Soft"| n1
  n0 ==>|"modern, if [@this].#35;(version==#quot;v2#quot;), Hard"| n2
  n0 -.->|"fallback, if [@this].#35;(version!=#quot;#quot;), Soft"| n3
  n3 -.->|"step 0, Soft"| n4
"""
    )


def test_mermaid_shows_weights_and_data() -> None:
    text = to_mermaid(_graph("graph-splitter-knative"))
    assert '"blue, weight 70, Soft"' in text and '"green, weight 30, Soft"' in text
    assert '"second, data $response, Soft"' in to_mermaid(_graph("graph-sequence-standard"))


def test_output_does_not_depend_on_document_order() -> None:
    graph = _graph("graph-switch-knative")
    nodes = graph.spec.nodes or {}
    reordered = graph.model_copy(
        update={"spec": graph.spec.model_copy(update={"nodes": dict(reversed(list(nodes.items())))})}
    )
    assert to_mermaid(reordered) == to_mermaid(graph)
    assert to_svg(reordered) == to_svg(graph)


def test_svg_is_well_formed_and_marks_hard_and_soft_edges() -> None:
    svg = to_svg(_graph("graph-switch-knative"))
    root = ET.fromstring(svg)
    ns = "{http://www.w3.org/2000/svg}"
    groups = root.findall(f"{ns}g")
    classes = [g.get("class") for g in groups]
    assert classes.count("router") == 2 and classes.count("service") == 3
    assert classes.count("edge hard") == 1 and classes.count("edge soft") == 3
    texts = [t.text for t in root.iter(f"{ns}text")]
    assert "root (Switch)" in texts and "echo (Sequence)" in texts
    assert any(t and t.startswith('1: modern, if [@this].#(version=="v2"), Hard') for t in texts)
    hard_line = next(g for g in groups if g.get("class") == "edge hard").find(f"{ns}line")
    assert hard_line is not None and hard_line.get("stroke-dasharray") is None
    soft_line = next(g for g in groups if g.get("class") == "edge soft").find(f"{ns}line")
    assert soft_line is not None and soft_line.get("stroke-dasharray") == "6 4"
