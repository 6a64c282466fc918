"""OpenTelemetry wiring for the model server and the scheduler (``pkg/controller/v1alpha2/llmisvc/tracing.go``)."""

from __future__ import annotations

from typing import Any

from .common import container
from .llm_types import LLMService

SCHEDULER_SERVICE = "inference-scheduler"
SERVER_SERVICE = "inference-server"


def _resource_env(namespace: str, name: str) -> list[dict[str, Any]]:
    return [
        {
            "name": "OTEL_RESOURCE_ATTRIBUTES_NODE_NAME",
            "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "spec.nodeName"}},
        },
        {
            "name": "OTEL_RESOURCE_ATTRIBUTES_POD_NAME",
            "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}},
        },
        {
            "name": "OTEL_RESOURCE_ATTRIBUTES",
            "value": f"k8s.namespace.name={namespace},k8s.node.name=$(OTEL_RESOURCE_ATTRIBUTES_NODE_NAME)"
            f",k8s.pod.name=$(OTEL_RESOURCE_ATTRIBUTES_POD_NAME),llmisvc.name={name}",
        },
    ]


def _has_arg(args: list[str], flag: str) -> bool:
    return any(a == flag or a.startswith(flag + "=") for a in args)


def _merge_env(target: dict[str, Any], env: list[dict[str, Any]]) -> None:
    existing = {e.get("name") for e in target.get("env") or []}
    target["env"] = list(target.get("env") or []) + [e for e in env if e["name"] not in existing]


def _otel_env(service: str, endpoint: str, tracing: dict[str, Any], svc: LLMService) -> list[dict[str, Any]]:
    return [
        {"name": "OTEL_SERVICE_NAME", "value": service},
        {"name": "OTEL_EXPORTER_OTLP_ENDPOINT", "value": endpoint},
        {"name": "OTEL_TRACES_EXPORTER", "value": str(tracing.get("exporter") or "")},
        {"name": "OTEL_TRACES_SAMPLER", "value": str(tracing.get("sampler") or "")},
        {"name": "OTEL_TRACES_SAMPLER_ARG", "value": str(tracing.get("samplerArg") or "")},
        *_resource_env(svc.namespace, svc.name),
    ]


def inject_server_tracing(tracing: Any, svc: LLMService, role_suffix: str, pod: dict[str, Any]) -> None:
    """``injectServerTracingIntoPodSpec``: vLLM's OTLP flags and env on ``main`` (only with an exporter endpoint)."""
    main = container(pod, "main")
    endpoint = str((tracing or {}).get("exporterEndpoint") or "")
    if main is None or not endpoint:
        return
    args = main.setdefault("args", [])
    if not _has_arg(args, "--otlp-traces-endpoint"):
        args += ["--otlp-traces-endpoint", endpoint]
    if not _has_arg(args, "--collect-detailed-traces"):
        args += ["--collect-detailed-traces", "all"]
    _merge_env(main, _otel_env(SERVER_SERVICE + role_suffix, endpoint, tracing, svc))


def inject_scheduler_tracing(tracing: Any, svc: LLMService, main: dict[str, Any]) -> None:
    """``injectSchedulerTracing``."""
    if tracing is None:
        return
    args = main.setdefault("args", [])
    if not _has_arg(args, "--tracing") and not _has_arg(args, "-tracing"):
        args.append("--tracing=true")
    _merge_env(main, _otel_env(SCHEDULER_SERVICE, str(tracing.get("exporterEndpoint") or ""), tracing, svc))
