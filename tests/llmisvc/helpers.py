"""Render LLMInferenceService manifests through the real pipeline, for the tests of this folder."""

from __future__ import annotations

from typing import Any

import yaml

from kserve_compile.driver import compile as compile_documents
from kserve_compile.errors import CompileError
from kserve_compile.inputs.parse import parse_text

ISVC_CONFIG_INGRESS = (
    '{"kserveIngressGateway": "kserve/kserve-ingress-gateway", "ingressGateway": "knative-serving/knative-ingress-gateway", '
    '"localGateway": "knative-serving/knative-local-gateway", '
    '"localGatewayService": "knative-local-gateway.istio-system.svc.cluster.local", "ingressDomain": "example.com"'
)


def llmisvc(name: str = "test-llm", namespace: str = "llm-test", **spec: Any) -> dict[str, Any]:
    spec.setdefault("model", {"uri": "pvc://models/llama"})
    spec.setdefault("template", {"containers": [{"name": "main"}]})
    return {"apiVersion": "serving.kserve.io/v1alpha2", "kind": "LLMInferenceService",
            "metadata": {"name": name, "namespace": namespace}, "spec": spec}  # fmt: skip


def configmap(**extra_ingress: Any) -> dict[str, Any]:
    import json

    ingress = (
        ISVC_CONFIG_INGRESS + "".join(f", {json.dumps(k)}: {json.dumps(v)}" for k, v in extra_ingress.items()) + "}"
    )
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "inferenceservice-config", "namespace": "kserve"},
            "data": {"ingress": ingress}}  # fmt: skip


def render(*manifests: dict[str, Any]) -> list[dict[str, Any]]:
    text = yaml.safe_dump_all(list(manifests), sort_keys=False)
    return compile_documents(parse_text(text, "in.yaml")).objects


def problems(*manifests: dict[str, Any]) -> list[Any]:
    text = yaml.safe_dump_all(list(manifests), sort_keys=False)
    try:
        compile_documents(parse_text(text, "in.yaml"))
    except CompileError as exc:
        return [p for p in exc.problems if p.severity == "error"]
    raise AssertionError("expected the render to fail")


def find(objects: list[dict[str, Any]], kind: str, name: str, api_version: str | None = None) -> dict[str, Any]:
    for obj in objects:
        if (
            obj["kind"] == kind
            and obj["metadata"]["name"] == name
            and (api_version is None or obj["apiVersion"] == api_version)
        ):
            return obj
    raise AssertionError(f"no {kind} {name} among {[(o['kind'], o['metadata']['name']) for o in objects]}")


def container(pod: dict[str, Any], name: str = "main") -> dict[str, Any]:
    return next(c for c in pod["containers"] if c["name"] == name)
