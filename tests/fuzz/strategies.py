"""Hypothesis strategies that generate and mutate InferenceServices (and their companions) for the property tests."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml
from hypothesis import strategies as st

SEEDS: list[dict[str, Any]] = [
    {
        "apiVersion": "serving.kserve.io/v1beta1",
        "kind": "InferenceService",
        "metadata": {
            "name": "sklearn-iris",
            "namespace": "default",
            "annotations": {"serving.kserve.io/deploymentMode": "Standard"},
        },
        "spec": {"predictor": {"model": {"modelFormat": {"name": "sklearn"}, "storageUri": "gs://bucket/model"}}},
    },
    {
        "apiVersion": "serving.kserve.io/v1beta1",
        "kind": "InferenceService",
        "metadata": {
            "name": "custom",
            "annotations": {
                "serving.kserve.io/deploymentMode": "Standard",
                "serving.kserve.io/autoscalerClass": "keda",
            },
        },
        "spec": {
            "predictor": {
                "minReplicas": 2,
                "maxReplicas": 4,
                "containers": [
                    {
                        "name": "kserve-container",
                        "image": "example.com/model:1",
                        "ports": [{"containerPort": 9000, "name": "grpc"}],
                    }
                ],
                "autoScaling": {
                    "metrics": [
                        {
                            "type": "Resource",
                            "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}},
                        }
                    ]
                },
            },
            "transformer": {
                "containers": [
                    {"image": "example.com/transformer:1", "env": [{"name": "STORAGE_URI", "value": "s3://b/t"}]}
                ]
            },
        },
    },
    {
        "apiVersion": "serving.kserve.io/v1beta1",
        "kind": "InferenceService",
        "metadata": {
            "name": "hf",
            "namespace": "ml",
            "labels": {"team": "a"},
            "annotations": {"serving.kserve.io/deploymentMode": "RawDeployment"},
        },
        "spec": {
            "predictor": {
                "model": {
                    "modelFormat": {"name": "huggingface"},
                    "storageUri": "hf://org/model",
                    "args": ["--max_length=10"],
                },
                "logger": {"mode": "all", "url": "http://logger"},
                "storageUris": None,
            },
            "explainer": {"containers": [{"name": "explainer", "image": "example.com/explainer:1"}]},
        },
    },
]

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**40), max_value=2**40),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=40),
    st.sampled_from(
        [
            "",
            "on",
            "yes",
            "0755",
            "1e3",
            "gs://x",
            "pvc://c/p",
            "oci://img",
            "Standard",
            "Knative",
            "ModelMesh",
            "none",
            "hpa",
            "keda",
            "kpa",
            "../etc",
            "a" * 300,
            "\x00",
            "{{.Name}}",
            "{{ .Bad",
        ]
    ),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=12), inner, max_size=3)),
    max_leaves=8,
)


def _paths(obj: Any, prefix: tuple = ()) -> list[tuple]:
    out = [prefix]
    if isinstance(obj, dict):
        for k, v in obj.items():
            out += _paths(v, prefix + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out += _paths(v, prefix + (i,))
    return out


def _set(obj: Any, path: tuple, value: Any) -> Any:
    if not path:
        return value
    parent = obj
    for part in path[:-1]:
        parent = parent[part]
    parent[path[-1]] = value
    return obj


def _delete(obj: Any, path: tuple) -> Any:
    if not path:
        return obj
    parent = obj
    for part in path[:-1]:
        parent = parent[part]
    del parent[path[-1]]
    return obj


@st.composite
def mutated_isvc(draw: st.DrawFn) -> Any:
    doc = copy.deepcopy(draw(st.sampled_from(SEEDS)))
    for _ in range(draw(st.integers(min_value=0, max_value=4))):
        paths = _paths(doc)
        path = draw(st.sampled_from(paths))
        action = draw(st.sampled_from(["replace", "delete", "insert"]))
        if action == "replace":
            doc = _set(doc, path, draw(values))
        elif action == "delete" and path:
            doc = _delete(doc, path)
        else:
            target = doc
            for part in path:
                target = target[part]
            if isinstance(target, dict):
                target[
                    draw(
                        st.sampled_from(
                            [
                                "unknownField",
                                "minReplicas",
                                "storageUri",
                                "containers",
                                "runtime",
                                "name",
                                "protocolVersion",
                                "timeout",
                            ]
                        )
                    )
                ] = draw(values)
            elif isinstance(target, list):
                target.append(draw(values))
        if not isinstance(doc, dict):
            break
    return doc


# --- every kind: real inputs (the golden scenarios, the examples and foreign objects), mutated ------------------

_ROOT = Path(__file__).resolve().parents[2]
FOREIGN = """
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: allow-predictor}
spec: {podSelector: {matchLabels: {app: x}}, policyTypes: [Ingress]}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: sidecar, labels: {app: sidecar}}
spec:
  replicas: 1
  selector: {matchLabels: {app: sidecar}}
  template:
    metadata: {labels: {app: sidecar}}
    spec: {containers: [{name: c, image: busybox, resources: {limits: {cpu: "1"}}}]}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: unrelated}
data: {a: b}
---
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources: [a.yaml]
"""


def _seed_files() -> list[tuple[str, str]]:
    files = sorted(_ROOT.glob("golden/*/input.yaml")) + sorted(_ROOT.glob("examples/*.yaml"))
    return [(str(p.relative_to(_ROOT)), p.read_text("utf-8")) for p in files] + [("foreign.yaml", FOREIGN)]


SEED_FILES = _seed_files()


def _mutate(draw: st.DrawFn, doc: Any) -> Any:
    path = draw(st.sampled_from(_paths(doc)))
    action = draw(st.sampled_from(["replace", "delete", "insert", "retype"]))
    if action == "delete" and path:
        return _delete(doc, path)
    target = doc
    for part in path:
        target = target[part]
    if action == "retype":  # the same node as another shape: a mapping as a list or a string, a string as a number
        changed = draw(st.sampled_from([[target], str(target)[:30], 7, True, None, {"x": target}]))
        return _set(doc, path, changed)
    if action == "insert" and isinstance(target, dict):
        key = draw(
            st.sampled_from(["unknownField", "name", "namespace", "labels", "annotations", "apiVersion", "kind"])
        )
        target[key] = draw(values)
        return doc
    if action == "insert" and isinstance(target, list):
        target.append(draw(values))
        return doc
    return _set(doc, path, draw(values))


@st.composite
def mutated_inputs(draw: st.DrawFn) -> tuple[str, list[Any]]:
    """(file name, its documents) from a real input of any kind, with one to three fields mutated."""
    name, text = draw(st.sampled_from(SEED_FILES))
    docs = [d for d in yaml.safe_load_all(text) if d is not None]
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        i = draw(st.integers(min_value=0, max_value=len(docs) - 1))
        docs[i] = _mutate(draw, docs[i])
    return name, docs
