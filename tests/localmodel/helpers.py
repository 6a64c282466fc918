"""Builders for local-model test inputs (shapes from KServe's localmodel controller tests)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from kserve_compile.driver import Result
from kserve_compile.driver import compile as compile_documents
from kserve_compile.inputs.parse import parse_paths

API = "serving.kserve.io/v1alpha1"


def node_group(name: str, instance_type: str | None = None, **pv_extra: Any) -> dict[str, Any]:
    pv: dict[str, Any] = {
        "accessModes": ["ReadWriteOnce"],
        "capacity": {"storage": "2048Mi"},
        "storageClassName": "standard",
        "hostPath": {"path": "/models", "type": "Directory"},
        "nodeAffinity": {
            "required": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {
                                "key": "node.kubernetes.io/instance-type",
                                "operator": "In",
                                "values": [instance_type or name],
                            }
                        ]
                    }
                ]
            }
        },
    }
    pv.update(pv_extra)
    return {
        "apiVersion": API,
        "kind": "LocalModelNodeGroup",
        "metadata": {"name": name},
        "spec": {
            "storageLimit": "1.7T",
            "persistentVolumeSpec": pv,
            "persistentVolumeClaimSpec": {
                "accessModes": ["ReadWriteOnce"],
                "resources": {"requests": {"storage": "2Gi"}},
            },
        },
    }


def cache(name: str, uri: str, groups: list[str], namespace: str | None = None, **spec: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    return {
        "apiVersion": API,
        "kind": "LocalModelNamespaceCache" if namespace else "LocalModelCache",
        "metadata": meta,
        "spec": {"sourceModelUri": uri, "modelSize": "123Gi", "nodeGroups": groups, **spec},
    }


def node(name: str, instance_type: str, *, ready: bool = True, agent: bool = True, **labels: str) -> dict[str, Any]:
    all_labels = {"node.kubernetes.io/instance-type": instance_type, **labels}
    if agent:
        all_labels["kserve/localmodel"] = "worker"
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": all_labels},
        "status": {"conditions": [{"type": "Ready", "status": "True" if ready else "False"}]},
    }


def isvc(
    name: str,
    uri: str,
    namespace: str = "default",
    annotations: dict[str, str] | None = None,
    labels: dict[str, str] | None = None,
) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "name": name,
        "namespace": namespace,
        "annotations": {"serving.kserve.io/deploymentMode": "Standard", **(annotations or {})},
    }
    if labels:
        meta["labels"] = labels
    return {
        "apiVersion": "serving.kserve.io/v1beta1",
        "kind": "InferenceService",
        "metadata": meta,
        "spec": {"predictor": {"model": {"modelFormat": {"name": "sklearn"}, "storageUri": uri}}},
    }


def config(**local_model: Any) -> dict[str, Any]:
    """The shipped inferenceservice-config with ``localModel`` enabled (and ``local_model`` merged over it)."""
    import json

    from kserve_compile.inputs.defaults import embedded_configmap

    cm = embedded_configmap()
    data = dict(cm["data"])
    settings = {**json.loads(data["localModel"]), "enabled": True, **local_model}
    data["localModel"] = json.dumps(settings)
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "inferenceservice-config", "namespace": "kserve"},
        "data": data,
    }


def render(tmp_path: Path, *objects: dict[str, Any]) -> Result:
    path = tmp_path / "in.yaml"
    path.write_text(yaml.safe_dump_all(objects, sort_keys=False))
    return compile_documents(parse_paths([str(path)]))


def by_kind(result: Result, kind: str) -> list[dict[str, Any]]:
    return [o for o in result.objects if o["kind"] == kind]


def names(result: Result, kind: str) -> list[tuple[str, str]]:
    return [
        (o["metadata"].get("namespace", ""), o["metadata"].get("name") or o["metadata"]["generateName"])
        for o in by_kind(result, kind)
    ]
