"""Builders shared by the compiler-core unit tests."""

from __future__ import annotations

from typing import Any

from kserve_compile.inputs.serving_types import InferenceService, ModelSpec, ServingRuntime


def runtime(
    name: str,
    formats: list[dict[str, Any]],
    *,
    namespace: str | None = None,
    protocols: list[str] | None = None,
    created: str | None = None,
    disabled: bool | None = None,
    image: str = "example.com/server:1.0",
) -> ServingRuntime:
    meta: dict[str, Any] = {"name": name}
    if namespace is not None:
        meta["namespace"] = namespace
    if created is not None:
        meta["creationTimestamp"] = created
    spec: dict[str, Any] = {
        "supportedModelFormats": formats,
        "containers": [{"name": "kserve-container", "image": image}],
    }
    if protocols is not None:
        spec["protocolVersions"] = protocols
    if disabled is not None:
        spec["disabled"] = disabled
    kind = "ServingRuntime" if namespace is not None else "ClusterServingRuntime"
    return ServingRuntime.model_validate(
        {"apiVersion": "serving.kserve.io/v1alpha1", "kind": kind, "metadata": meta, "spec": spec}
    )


def model(fmt: str, version: str | None = None, **extra: Any) -> ModelSpec:
    data: dict[str, Any] = {"modelFormat": {"name": fmt, **({"version": version} if version else {})}, **extra}
    return ModelSpec.model_validate(data)


def isvc(spec: dict[str, Any], annotations: dict[str, str] | None = None, name: str = "demo") -> InferenceService:
    meta: dict[str, Any] = {"name": name, "namespace": "default"}
    if annotations:
        meta["annotations"] = annotations
    return InferenceService.model_validate(
        {"apiVersion": "serving.kserve.io/v1beta1", "kind": "InferenceService", "metadata": meta, "spec": spec}
    )
