"""Builders for the admission-rule tests: an isvc is defaulted, then validated, as KServe's two webhooks do."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kserve_compile.errors import InputError
from kserve_compile.inputs.config import KServeConfig, parse_config
from kserve_compile.inputs.defaults import embedded_configmap
from kserve_compile.inputs.serving_types import InferenceService
from kserve_compile.plan.admission import validate_isvc
from kserve_compile.plan.defaulting import default_isvc

SHIPPED = parse_config(embedded_configmap()["data"])  # default deployment mode Knative ("Serverless")
MODE = "serving.kserve.io/deploymentMode"
AUTOSCALER = "serving.kserve.io/autoscalerClass"
STANDARD = {MODE: "Standard"}
URI = "gs://testbucket/testmodel"


def config_with(**sections: Any) -> KServeConfig:
    return parse_config({**embedded_configmap()["data"], **{k: json.dumps(v) for k, v in sections.items()}})


def sklearn(**extra: Any) -> dict[str, Any]:
    """A ``model`` predictor (sklearn) with a storage URI, plus ``extra`` model fields."""
    return {"modelFormat": {"name": "sklearn"}, "storageUri": URI, **extra}


def make(spec: dict[str, Any], annotations: dict[str, str] | None = None, name: str = "foo") -> InferenceService:
    meta: dict[str, Any] = {"name": name, "namespace": "default"}
    if annotations:
        meta["annotations"] = annotations
    return InferenceService.model_validate(
        {"apiVersion": "serving.kserve.io/v1beta1", "kind": "InferenceService", "metadata": meta, "spec": spec}
    )


def admit(
    spec: dict[str, Any],
    annotations: dict[str, str] | None = None,
    *,
    name: str = "foo",
    config: KServeConfig = SHIPPED,
) -> list[str]:
    """Default then validate, as the API server runs the two webhooks; the warnings of an admitted isvc."""
    written = make(spec, annotations, name)
    return validate_isvc(default_isvc(written, config), "", config, source=written)


def reject(
    spec: dict[str, Any],
    annotations: dict[str, str] | None = None,
    *,
    name: str = "foo",
    config: KServeConfig = SHIPPED,
) -> InputError:
    with pytest.raises(InputError) as err:
        admit(spec, annotations, name=name, config=config)
    return err.value


def assert_rejects(
    spec: dict[str, Any], annotations: dict[str, str] | None, message: str, path: str, **kw: Any
) -> None:
    err = reject(spec, annotations, **kw)
    assert (err.message, err.path) == (message, path)
