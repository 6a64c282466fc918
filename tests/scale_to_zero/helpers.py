"""Builders for the scale-to-zero tests: an isvc (and optionally a config) compiled by the one driver."""

from __future__ import annotations

import json
from typing import Any

import yaml

from kserve_compile.driver import Result, compile
from kserve_compile.errors import CompileError, Problem
from kserve_compile.inputs.defaults import embedded_configmap
from kserve_compile.inputs.parse import parse_text

OPT_IN = "kserve-compile.io/scale-to-zero"
STANDARD = {"serving.kserve.io/deploymentMode": "Standard"}
URI = "gs://kfserving-examples/models/sklearn/1.0/model"


def sklearn(**extra: Any) -> dict[str, Any]:
    return {"model": {"modelFormat": {"name": "sklearn"}, "storageUri": URI}, **extra}


def isvc(
    predictor: dict[str, Any] | None = None,
    annotations: dict[str, str] | None = None,
    *,
    name: str = "iris",
    namespace: str = "ml",
    labels: dict[str, str] | None = None,
    **spec: Any,
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "annotations": {**STANDARD, **(annotations or {})}}
    if labels:
        meta["labels"] = labels
    return {
        "apiVersion": "serving.kserve.io/v1beta1",
        "kind": "InferenceService",
        "metadata": meta,
        "spec": {"predictor": predictor or sklearn(), **spec},
    }


def config(**sections: Any) -> dict[str, Any]:
    """KServe's shipped ConfigMap with ``sections`` (JSON values) added or replaced."""
    cm = embedded_configmap()
    data = {**cm["data"], **{k: v if isinstance(v, str) else json.dumps(v) for k, v in sections.items()}}
    return {**cm, "metadata": {"name": "inferenceservice-config", "namespace": "kserve"}, "data": data}


def run(*objects: dict[str, Any]) -> Result:
    return compile(parse_text(yaml.safe_dump_all(objects), "in.yaml"))


def rendered(*objects: dict[str, Any]) -> list[dict[str, Any]]:
    return run(*objects).objects


def kinds(objects: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return sorted((o["kind"], o["metadata"]["name"]) for o in objects)


def one(objects: list[dict[str, Any]], kind: str, name: str | None = None) -> dict[str, Any]:
    found = [o for o in objects if o["kind"] == kind and (name is None or o["metadata"]["name"] == name)]
    assert len(found) == 1, kinds(objects)
    return found[0]


def errors(*objects: dict[str, Any]) -> list[Problem]:
    try:
        run(*objects)
    except CompileError as exc:
        return [p for p in exc.problems if p.severity == "error"]
    raise AssertionError("no error")


def notes(result: Result) -> list[str]:
    return [p.message for p in result.warnings]
